package dev.stagger.jobs;

import dev.stagger.Clock;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.Checks;
import dev.stagger.jdbc.internal.Echo;
import dev.stagger.jobs.internal.PoolRuntime;
import dev.stagger.jobs.internal.StoredTimes;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Runs the jobs of one queue with up to {@code concurrency} handlers at a time.
 *
 * <p>How it works, one thread per concern, each on its own database connection:
 * <ul>
 *   <li>the <b>fetcher</b> claims due jobs under a lease (PostgreSQL {@code FOR UPDATE SKIP
 *       LOCKED}; SQLite one atomic {@code UPDATE ... RETURNING}), only as many as there are free
 *       handlers, and hands them to the handler threads;</li>
 *   <li>the <b>completer</b> stores the outcomes in batches, each change guarded by "this pool
 *       still holds this attempt"; on PostgreSQL, while the pool is busy, the fetcher's claims
 *       carry the successes instead (one statement claims the next jobs and completes the last);</li>
 *   <li>the <b>heartbeat</b> extends the leases of the jobs the pool holds, and nothing else, so
 *       no other worker's lock or slow statement can make a live pool lose its leases;</li>
 *   <li><b>maintenance</b> rescues jobs of the queue whose lease expired (on its own cadence,
 *       skipping rows other transactions hold), purges old finished jobs when retentions are
 *       set, and measures the queue for {@link JobListener#measured};</li>
 *   <li>on PostgreSQL a <b>listener</b> wakes the idle fetcher on NOTIFY.</li>
 * </ul>
 * An idle pool is woken at once by jobs enqueued through the same {@link JobQueue} object (any
 * database) and, on PostgreSQL, by LISTEN/NOTIFY from any process; polling is the fallback. After
 * a database failure each thread reconnects with exponential backoff; the stored state stays
 * consistent because every change is conditional.
 *
 * <p>Timing: every wait of the pool (polls, heartbeats, rescue, purge and stats cadences,
 * reconnect pauses, the shutdown timeout) runs on the queue's {@link Clock}, through its scheduler,
 * so on a {@link dev.stagger.testing.VirtualClock} the pool acts exactly when a test moves time.
 * Stored times (run-at, leases) come from the database's clock or the queue's (see
 * {@link JobQueue.Builder#databaseClock}).
 *
 * <p>Lifecycle: {@link #start()} once, {@link #shutdown(Duration)} (or {@link #close()}) once.
 * {@link #runAvailable()} runs due jobs on the calling thread instead, for tests and cron-style
 * use. Thread-safe.
 */
public final class WorkerPool implements AutoCloseable {
    private final PoolRuntime runtime;
    private final String queue;
    private final int concurrency;
    private final Duration shutdownTimeout;

    private WorkerPool(Builder b) {
        this.queue = b.queue;
        this.concurrency = b.concurrency;
        this.shutdownTimeout = b.shutdownTimeout;
        JobQueue jobQueue = b.jobQueue;
        PoolRuntime.Settings settings = new PoolRuntime.Settings(b.queue, b.workerId != null ? b.workerId : b.queue,
                b.concurrency, b.batchSize > 0 ? b.batchSize : b.concurrency, b.handlers, b.policies, b.policy,
                b.lease.toMillis(), (b.heartbeat != null ? b.heartbeat : b.lease.dividedBy(3)).toNanos(),
                (b.rescueInterval != null ? b.rescueInterval : b.lease.dividedBy(2)).toNanos(),
                b.pollInterval.toNanos(), b.purgeInterval.toNanos(), b.statsInterval.toNanos(), b.retention, b.listen,
                b.listener, b.random, b.nesting);
        this.runtime = new PoolRuntime(settings, jobQueue.tables(), jobQueue.clock(), jobQueue::connection,
                new PoolRuntime.LocalPools() {
                    @Override
                    public Object add(String queue, Runnable wake) {
                        return jobQueue.addLocalPool(queue, wake);
                    }

                    @Override
                    public void remove(Object handle) {
                        jobQueue.removeLocalPool(handle);
                    }
                });
    }

    /** Starts building a pool for {@code queue} of {@code jobQueue}. */
    public static Builder builder(JobQueue jobQueue, String queue) {
        return new Builder(jobQueue, queue);
    }

    /** This pool's lease owner id, stored on the jobs it holds. */
    public String workerId() {
        return runtime.workerId();
    }

    /** Starts the pool's threads. */
    public WorkerPool start() {
        runtime.start();
        return this;
    }

    /**
     * Claims and runs due jobs on the calling thread until none is due, after rescuing every
     * expired lease of the queue (as the pool's maintenance thread does). Returns how many attempts
     * ran. For tests on a virtual clock and cron-style runs.
     *
     * @throws dev.stagger.jdbc.StoreException if the database fails
     */
    public int runAvailable() {
        return runtime.runAvailable();
    }

    /** {@link #shutdown(Duration)} with the configured shutdown timeout. */
    @Override
    public void close() {
        shutdown(shutdownTimeout);
    }

    /**
     * Stops gracefully: claims nothing more, waits up to {@code timeout} (on the queue's clock) for
     * running handlers, then interrupts the rest (their jobs go back to the queue, the attempt not
     * counted) and stores every outcome it can.
     *
     * @return true if every running job finished within the timeout
     */
    public boolean shutdown(Duration timeout) {
        Checks.nonNegative("timeout", timeout);
        return runtime.shutdown(timeout);
    }

    @Override
    public String toString() {
        return "WorkerPool{queue=" + queue + ", id=" + workerId() + ", concurrency=" + concurrency + "}";
    }

    /** Builds a {@link WorkerPool}. Not thread-safe. */
    public static final class Builder {
        /** The longest lease or interval: a year (and a day). */
        private static final Duration LONGEST_INTERVAL = Duration.ofDays(366);

        private final JobQueue jobQueue;
        private final String queue;
        private final Map<String, JobHandler> handlers = new LinkedHashMap<>();
        private final Map<String, RetryPolicy> policies = new LinkedHashMap<>();
        private final Map<JobState, Long> retention = new EnumMap<>(JobState.class);
        private int concurrency = 4;
        private int batchSize;
        private RetryPolicy policy = RetryPolicy.background();
        private Duration lease = Duration.ofSeconds(30);
        private @Nullable Duration heartbeat;
        private @Nullable Duration rescueInterval;
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration shutdownTimeout = Duration.ofSeconds(30);
        private Duration purgeInterval = Duration.ofHours(1);
        private Duration statsInterval = Duration.ofSeconds(30);
        private boolean listen = true;
        private JobListener listener = new JobListener() {
        };
        private RandomSource random = RandomSource.threadLocal();
        private Nesting nesting = Nesting.DEFER;
        private @Nullable String workerId;

        private Builder(JobQueue jobQueue, String queue) {
            this.jobQueue = Checks.notNull("jobQueue", jobQueue);
            this.queue = Names.name("queue", queue);
        }

        /** Runs jobs of {@code type} with {@code handler}, under the pool's retry policy. */
        public Builder handler(String type, JobHandler handler) {
            Names.name("type", type);
            Checks.notNull("handler", handler);
            handlers.put(type, handler);
            return this;
        }

        /** Runs jobs of {@code type} with {@code handler} under {@code policy}. */
        public Builder handler(String type, JobHandler handler, RetryPolicy policy) {
            handler(type, handler);
            policies.put(type, Checks.notNull("policy", policy));
            return this;
        }

        /**
         * The policy for types registered without one; default {@link RetryPolicy#background()}.
         * A job's failures are decided by the core {@link dev.stagger.RetryEngine}, as a
         * {@link dev.stagger.Retry} call's are: the classifier (retry or dead), maxAttempts (unless
         * the job sets its own), the backoff (with its jitter, one schedule across the job's
         * attempts) plus any {@code retryAfter} hint, and the deadline, counted from the start of
         * the job's first attempt. A handler that returns is a success: the classifier sees only
         * failures. An attempt whose worker stopped extending its lease fails with a
         * {@link LeaseExpiredException}. The attempt timeout does not apply to jobs.
         */
        public Builder policy(RetryPolicy policy) {
            this.policy = Checks.notNull("policy", policy);
            return this;
        }

        /** Handlers running at once; default 4. */
        public Builder concurrency(int concurrency) {
            if (concurrency < 1 || concurrency > 1000) {
                throw new IllegalArgumentException("concurrency must be in [1, 1000], got " + concurrency);
            }
            this.concurrency = concurrency;
            return this;
        }

        /**
         * Most jobs claimed per query; default the concurrency. The pool claims a job only for a
         * free handler, so a claim never takes more jobs than it can start at once: the rest stay
         * in the queue for other workers.
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > 1000) {
                throw new IllegalArgumentException("batchSize must be in [1, 1000], got " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * How long a claim lasts without a heartbeat; default 30 s. A job whose worker dies is
         * taken back at most {@code lease + rescueInterval} after the worker's last heartbeat.
         * At least 500 ms.
         */
        public Builder lease(Duration lease) {
            if (lease == null || lease.toMillis() < 500 || lease.compareTo(LONGEST_INTERVAL) > 0) {
                throw new IllegalArgumentException("lease must be at least 500 ms and at most 366 days, got " + lease);
            }
            this.lease = lease;
            return this;
        }

        /** How often held leases are extended; default a third of the lease; must be shorter than the lease. */
        public Builder heartbeatInterval(Duration heartbeat) {
            this.heartbeat = interval("heartbeatInterval", heartbeat, 10);
            return this;
        }

        /**
         * How often this pool looks for expired leases in its queue; default half the lease. The
         * worst case from a worker's death to its jobs being available again is
         * {@code lease + rescueInterval}.
         */
        public Builder rescueInterval(Duration rescueInterval) {
            this.rescueInterval = interval("rescueInterval", rescueInterval, 10);
            return this;
        }

        /**
         * How often an idle pool looks for due jobs; default 1 s. Jobs scheduled for later (retries,
         * delays) start within this of their time. Jobs enqueued through the same {@link JobQueue}
         * object, and on PostgreSQL from any process, wake the pool at once.
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = interval("pollInterval", pollInterval, 1);
            return this;
        }

        /** Default timeout of {@link WorkerPool#close()}; default 30 s. */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            Checks.nonNegative("shutdownTimeout", shutdownTimeout);
            this.shutdownTimeout = shutdownTimeout;
            return this;
        }

        /**
         * Deletes this queue's jobs in {@code state} ({@link JobState#SUCCEEDED} or
         * {@link JobState#DEAD}) once they finished longer than {@code retention} ago, with their
         * error history, every {@link #purgeInterval}. Off for both states by default (purge with
         * {@link JobAdmin#purge} or {@code stagger jobs purge}); a purged job's key can be used again.
         *
         * <p>A {@link JobState#SUCCEEDED} retention of zero (under a millisecond, the stored
         * precision) keeps no successes at all: each success deletes its job and its error history
         * in the statement that would have marked it SUCCEEDED (still only while this pool holds
         * that attempt), so its key is free again at once and the table holds only unfinished and
         * dead jobs. Listeners still hear {@link JobListener#succeeded}; {@link JobAdmin} finds
         * nothing of the job afterwards. This is cheaper for the database than keeping successes
         * (no new row version and index entries per success): choose it when nothing reads the
         * history of succeeded jobs.
         */
        public Builder retention(JobState state, Duration retention) {
            Checks.notNull("state", state);
            if (state != JobState.SUCCEEDED && state != JobState.DEAD) {
                throw new IllegalArgumentException("retention is for finished states (SUCCEEDED, DEAD), got " + state);
            }
            this.retention.put(state, StoredTimes.delayMillis("retention", retention));
            return this;
        }

        /** How often the {@link #retention} purge runs; default 1 h, the first at start. */
        public Builder purgeInterval(Duration purgeInterval) {
            this.purgeInterval = interval("purgeInterval", purgeInterval, 1000);
            return this;
        }

        /**
         * How often the pool measures its queue (jobs by state, the oldest due job's wait) for
         * {@link JobListener#measured}; default 30 s, {@link Duration#ZERO} never. Two indexed
         * counting queries per interval.
         */
        public Builder statsInterval(Duration statsInterval) {
            this.statsInterval = statsInterval != null && statsInterval.isZero()
                    ? Duration.ZERO : interval("statsInterval", statsInterval, 100);
            return this;
        }

        /** On PostgreSQL, wake on NOTIFY (default true); false polls only. Ignored on SQLite. */
        public Builder listen(boolean listen) {
            this.listen = listen;
            return this;
        }

        /** Hears what the pool does with jobs (stagger-observability's {@code JobTelemetry}, say); default none. */
        public Builder jobListener(JobListener listener) {
            this.listener = Checks.notNull("jobListener", listener);
            return this;
        }

        /**
         * What the pool does with a failure a Stagger retry inside the handler already decided on
         * (retried until it gave up, or judged not retryable: see the README's "Retrying across
         * layers and services"). {@link Nesting#DEFER} (the default): the job is not retried again;
         * it goes to DEAD with NOT_RETRYABLE, its error naming the inner retry. {@link Nesting#RETRY_AGAIN}:
         * the job's own policy retries it as any failure (attempts multiply: the inner's in each of
         * the job's, spread over the job's waits). {@link Nesting#REFUSE} is not accepted here.
         */
        public Builder nesting(Nesting nesting) {
            Checks.notNull("nesting", nesting);
            if (nesting == Nesting.REFUSE) {
                throw new IllegalArgumentException("nesting must be DEFER or RETRY_AGAIN for a worker pool, got REFUSE");
            }
            this.nesting = nesting;
            return this;
        }

        /** Randomness for backoff jitter; default thread-local. */
        public Builder random(RandomSource random) {
            this.random = Checks.notNull("random", random);
            return this;
        }

        /**
         * A readable name for this pool, stored (with a random suffix added per pool) as the lease
         * owner of the jobs it holds; default the queue name.
         */
        public Builder workerId(String workerId) {
            if (workerId == null || workerId.isBlank() || workerId.length() > 90) {
                throw new IllegalArgumentException("workerId must be 1 to 90 non-blank characters, got "
                        + Echo.of(workerId));
            }
            this.workerId = Names.name("workerId", workerId);
            return this;
        }

        /**
         * Validates the settings together and builds the pool (not started).
         *
         * @throws IllegalArgumentException when no handler is registered or the heartbeat is not shorter than the lease
         */
        public WorkerPool build() {
            if (handlers.isEmpty()) {
                throw new IllegalArgumentException("handlers must not be empty: register at least one job type");
            }
            Duration hb = heartbeat != null ? heartbeat : lease.dividedBy(3);
            if (hb.compareTo(lease) >= 0) {
                throw new IllegalArgumentException("heartbeatInterval must be shorter than the lease " + lease + ", got " + hb);
            }
            return new WorkerPool(this);
        }

        private static Duration interval(String field, Duration value, long minMillis) {
            if (value == null || value.toMillis() < minMillis || value.compareTo(LONGEST_INTERVAL) > 0) {
                throw new IllegalArgumentException(field + " must be at least " + minMillis + " ms and at most 366 days, got "
                        + value);
            }
            return value;
        }
    }
}
