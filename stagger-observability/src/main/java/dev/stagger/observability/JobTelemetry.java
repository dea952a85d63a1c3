package dev.stagger.observability;

import dev.stagger.EndReason;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobListener;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.QueueStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Meters and structured log lines for durable jobs (stagger-jobs), built from a
 * {@code WorkerPool}'s {@link JobListener} events. One line wires both:
 *
 * <pre>{@code
 * WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send-receipt", handler)
 *         .jobListener(JobTelemetry.of(registry))
 *         .build();
 * }</pre>
 *
 * <h2>Meters</h2>
 * Tag values come from the jobs (their queue and type: fixed sets in an application) and from
 * fixed sets of words, never from a job's id, key or payload.
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>Name</th><th>Type</th><th>Tags</th><th>Counts</th></tr>
 *   <tr><td>{@value #JOBS}</td><td>counter</td><td>{@code queue}, {@code type}, {@code outcome} =
 *       succeeded | retried | dead | snoozed | rescued</td><td>attempts, by what became of them
 *       ({@code rescued}: the worker running it stopped extending its lease)</td></tr>
 *   <tr><td>{@value #ATTEMPTS}</td><td>distribution summary</td><td>{@code queue}, {@code type},
 *       {@code outcome} = succeeded | dead</td><td>attempts a job had used when it ended</td></tr>
 *   <tr><td>{@value #DEAD}</td><td>counter</td><td>{@code queue}, {@code type}, {@code reason} =
 *       exhausted | not_retryable | deadline | interrupted</td><td>jobs that went dead, by why</td></tr>
 *   <tr><td>{@value #RUN_TIME}</td><td>timer</td><td>{@code queue}, {@code type}</td><td>how long a
 *       succeeded attempt's handler ran</td></tr>
 *   <tr><td>{@value #DEPTH}</td><td>gauge</td><td>{@code queue}, {@code state} = available |
 *       running | dead</td><td>jobs in the queue by state, as last measured by a pool (every
 *       {@code statsInterval}); {@code state=dead} is the DEAD count an alert watches</td></tr>
 *   <tr><td>{@value #OLDEST_AVAILABLE_AGE}</td><td>time gauge</td><td>{@code queue}</td><td>how long
 *       the due job that waited longest has waited since its run-at time: the queue's lag</td></tr>
 *   <tr><td>{@value #PURGED}</td><td>counter</td><td>{@code queue}, {@code state}</td><td>finished jobs
 *       the pool's purge schedule deleted</td></tr>
 *   <tr><td>{@value #DATABASE_ERRORS}</td><td>counter</td><td></td><td>failed database work a pool
 *       will retry after reconnecting</td></tr>
 * </table>
 *
 * <h2>Log lines</h2>
 * SLF4J 2 key-value pairs (logger {@value #DEFAULT_LOGGER} unless {@link #withLogger} gives
 * another), so a structured encoder turns them into fields: a retried attempt writes
 * {@code event=job_retry} at INFO with {@code queue}, {@code type}, {@code job_id},
 * {@code attempt}, {@code max_attempts} (when the job has its own), {@code delay_ms},
 * {@code error} (the failure's class) and {@code message}; a rescued attempt writes
 * {@code event=job_rescued} at WARN with {@code queue}, {@code type}, {@code job_id},
 * {@code attempt}, {@code state} (what the job became) and {@code message} (whose lease expired);
 * a job that went dead writes {@code event=job_dead} at WARN with {@code queue}, {@code type},
 * {@code job_id}, {@code attempts}, {@code reason} (the end reason in lower case), {@code error}
 * and {@code message}. The message is the failure's message as the job's history keeps it; no
 * payload is written.
 *
 * <p>Immutable and thread-safe. Give every pool of a registry the same instance: counters are
 * shared between instances, but a queue's gauges show the measurements of the instance that
 * registered them first.
 */
public final class JobTelemetry implements JobListener {
    /** Attempts, tagged {@code queue}, {@code type} and {@code outcome}. */
    public static final String JOBS = "stagger.jobs";
    /** Attempts a job used, when it ended, tagged {@code queue}, {@code type} and {@code outcome}. */
    public static final String ATTEMPTS = "stagger.jobs.attempts";
    /** Jobs that went dead, tagged {@code queue}, {@code type} and {@code reason}. */
    public static final String DEAD = "stagger.jobs.dead";
    /** Handler run time of succeeded attempts, tagged {@code queue} and {@code type}. */
    public static final String RUN_TIME = "stagger.jobs.run.time";
    /** Jobs by state as last measured, tagged {@code queue} and {@code state}. */
    public static final String DEPTH = "stagger.jobs.depth";
    /** The wait of the queue's longest-waiting due job, tagged {@code queue}. */
    public static final String OLDEST_AVAILABLE_AGE = "stagger.jobs.oldest.available.age";
    /** Finished jobs deleted by a purge schedule, tagged {@code queue} and {@code state}. */
    public static final String PURGED = "stagger.jobs.purged";
    /** Failed database work of the pools. */
    public static final String DATABASE_ERRORS = "stagger.jobs.database.errors";
    /** The logger used unless {@link #withLogger} gives another. */
    public static final String DEFAULT_LOGGER = "dev.stagger.jobs";

    private final MeterRegistry registry;
    private final Tags tags;
    private final Logger logger;
    private final Map<String, TypeMeters> types;
    private final Map<String, QueueGauges> queues;
    private final Counter databaseErrors;

    private JobTelemetry(MeterRegistry registry, Tags tags, Logger logger) {
        this.registry = registry;
        this.tags = tags;
        this.logger = logger;
        this.types = new ConcurrentHashMap<>();
        this.queues = new ConcurrentHashMap<>();
        this.databaseErrors = Counter.builder(DATABASE_ERRORS).description("Failed database work of the job pools")
                .tags(tags).register(registry);
    }

    /** Meters in {@code registry} and log lines on {@value #DEFAULT_LOGGER}. */
    public static JobTelemetry of(MeterRegistry registry) {
        if (registry == null) {
            throw new NullPointerException("registry must not be null");
        }
        return new JobTelemetry(registry, Tags.empty(), LoggerFactory.getLogger(DEFAULT_LOGGER));
    }

    /** This telemetry writing its lines to {@code logger}. */
    public JobTelemetry withLogger(Logger logger) {
        if (logger == null) {
            throw new NullPointerException("logger must not be null");
        }
        return new JobTelemetry(registry, tags, logger);
    }

    /** Meters that also carry {@code tags} (say {@code service=billing}); keep their values few. */
    public JobTelemetry withTags(Iterable<Tag> tags) {
        if (tags == null) {
            throw new NullPointerException("tags must not be null");
        }
        return new JobTelemetry(registry, this.tags.and(tags), logger);
    }

    @Override
    public void succeeded(Job job, Duration runTime) {
        TypeMeters m = meters(job);
        m.outcome(Outcome.SUCCEEDED).increment();
        m.attempts(Outcome.SUCCEEDED).record(job.attempt());
        m.runTime.record(runTime);
    }

    @Override
    public void retried(Job job, JobError error, Instant nextRunAt) {
        meters(job).outcome(Outcome.RETRIED).increment();
        if (logger.isInfoEnabled()) {
            LoggingEventBuilder line = line(Level.INFO, "job_retry", job);
            line = line.addKeyValue("attempt", job.attempt());
            if (job.maxAttempts() > 0) {
                line = line.addKeyValue("max_attempts", job.maxAttempts());
            }
            long delay = Math.max(0, Duration.between(error.failedAt(), nextRunAt).toMillis());
            line = line.addKeyValue("delay_ms", delay);
            line = line.addKeyValue("error", simpleName(error.exceptionClass()));
            line = line.addKeyValue("message", error.message());
            line.setMessage("job {} {}/{} attempt {} failed ({}), retrying in {} ms").addArgument(job.id())
                    .addArgument(job.queue()).addArgument(job.type()).addArgument(job.attempt())
                    .addArgument(simpleName(error.exceptionClass())).addArgument(delay).log();
        }
    }

    @Override
    public void dead(Job job, JobError error, EndReason reason) {
        TypeMeters m = meters(job);
        m.outcome(Outcome.DEAD).increment();
        m.attempts(Outcome.DEAD).record(job.attempt());
        m.dead(reason).increment();
        if (logger.isWarnEnabled()) {
            String why = reason.name().toLowerCase(Locale.ROOT);
            LoggingEventBuilder line = line(Level.WARN, "job_dead", job);
            line = line.addKeyValue("attempts", job.attempt());
            line = line.addKeyValue("reason", why);
            line = line.addKeyValue("error", simpleName(error.exceptionClass()));
            line = line.addKeyValue("message", error.message());
            line.setMessage("job {} {}/{} is dead after {} attempts ({}: {})").addArgument(job.id())
                    .addArgument(job.queue()).addArgument(job.type()).addArgument(job.attempt()).addArgument(why)
                    .addArgument(simpleName(error.exceptionClass())).log();
        }
    }

    @Override
    public void snoozed(Job job, Instant runAt) {
        meters(job).outcome(Outcome.SNOOZED).increment();
    }

    @Override
    public void rescued(Job job, JobError error, JobState newState) {
        meters(job).outcome(Outcome.RESCUED).increment();
        if (logger.isWarnEnabled()) {
            LoggingEventBuilder line = line(Level.WARN, "job_rescued", job);
            line = line.addKeyValue("attempt", job.attempt());
            line = line.addKeyValue("state", newState.name().toLowerCase(Locale.ROOT));
            line = line.addKeyValue("message", error.message());
            line.setMessage("job {} {}/{} attempt {} was taken back ({}), now {}").addArgument(job.id())
                    .addArgument(job.queue()).addArgument(job.type()).addArgument(job.attempt())
                    .addArgument(error.message()).addArgument(newState).log();
        }
    }

    @Override
    public void purged(String queue, JobState state, int deleted) {
        Counter.builder(PURGED).description("Finished jobs deleted by the purge schedule").baseUnit("jobs").tags(tags)
                .tag("queue", queue).tag("state", state.name().toLowerCase(Locale.ROOT)).register(registry)
                .increment(deleted);
    }

    @Override
    public void measured(QueueStats stats) {
        queues.computeIfAbsent(stats.queue(), QueueGauges::new).set(stats);
    }

    @Override
    public void databaseError(Exception error, Duration backoff) {
        databaseErrors.increment();
    }

    private LoggingEventBuilder line(Level level, String event, Job job) {
        return logger.atLevel(level).addKeyValue("event", event).addKeyValue("queue", job.queue())
                .addKeyValue("type", job.type()).addKeyValue("job_id", job.id());
    }

    private static String simpleName(String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }

    private TypeMeters meters(Job job) {
        return types.computeIfAbsent(job.queue() + '\0' + job.type(), k -> new TypeMeters(job.queue(), job.type()));
    }

    private enum Outcome { SUCCEEDED, RETRIED, DEAD, SNOOZED, RESCUED }

    /** The meters of one job type of one queue, created on its first event. */
    private final class TypeMeters {
        private final Tags typeTags;
        private final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);
        private final Map<Outcome, DistributionSummary> attempts = new EnumMap<>(Outcome.class);
        private final Map<EndReason, Counter> dead = new ConcurrentHashMap<>();
        private final Timer runTime;

        TypeMeters(String queue, String type) {
            this.typeTags = tags.and("queue", queue, "type", type);
            for (Outcome o : Outcome.values()) {
                outcomes.put(o, Counter.builder(JOBS).description("Job attempts, by what became of them").tags(typeTags)
                        .tag("outcome", o.name().toLowerCase(Locale.ROOT)).register(registry));
            }
            for (Outcome o : new Outcome[] {Outcome.SUCCEEDED, Outcome.DEAD}) {
                attempts.put(o, DistributionSummary.builder(ATTEMPTS).description("Attempts a job used when it ended")
                        .tags(typeTags).tag("outcome", o.name().toLowerCase(Locale.ROOT)).register(registry));
            }
            runTime = Timer.builder(RUN_TIME).description("Handler run time of succeeded attempts").tags(typeTags)
                    .register(registry);
        }

        Counter outcome(Outcome o) {
            return Objects.requireNonNull(outcomes.get(o), "outcome"); // one per outcome, made up front
        }

        DistributionSummary attempts(Outcome o) {
            return Objects.requireNonNull(attempts.get(o), "outcome"); // one per outcome, made up front
        }

        Counter dead(EndReason reason) {
            return dead.computeIfAbsent(Objects.requireNonNullElse(reason, EndReason.NOT_RETRYABLE),
                    r -> Counter.builder(DEAD).description("Jobs that went dead, by why").tags(typeTags)
                            .tag("reason", r.name().toLowerCase(Locale.ROOT)).register(registry));
        }
    }

    /** The gauges of one queue, registered on its first measurement, holding the latest one. */
    private final class QueueGauges {
        private final AtomicLong available = new AtomicLong();
        private final AtomicLong running = new AtomicLong();
        private final AtomicLong deadCount = new AtomicLong();
        private final AtomicLong oldestMillis = new AtomicLong();

        QueueGauges(String queue) {
            Tags queueTags = tags.and("queue", queue);
            gauge(queueTags, "available", available);
            gauge(queueTags, "running", running);
            gauge(queueTags, "dead", deadCount);
            TimeGauge.builder(OLDEST_AVAILABLE_AGE, oldestMillis, TimeUnit.MILLISECONDS, AtomicLong::doubleValue)
                    .description("How long the queue's longest-waiting due job has waited").tags(queueTags)
                    .strongReference(true).register(registry);
        }

        private void gauge(Tags queueTags, String state, AtomicLong value) {
            Gauge.builder(DEPTH, value, AtomicLong::doubleValue).description("Jobs in the queue by state, last measured")
                    .tags(queueTags).tag("state", state).strongReference(true).register(registry);
        }

        void set(QueueStats stats) {
            available.set(stats.available());
            running.set(stats.running());
            deadCount.set(stats.dead());
            oldestMillis.set(stats.oldestAvailableAge().toMillis());
        }
    }

    @Override
    public String toString() {
        return "JobTelemetry{" + registry.getClass().getSimpleName() + ", tags=" + tags + ", logger=" + logger.getName() + "}";
    }
}
