package dev.stagger.jobs;

import dev.stagger.Clock;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.Checks;
import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.Echo;
import dev.stagger.jobs.internal.Completer;
import dev.stagger.jobs.internal.Fetcher;
import dev.stagger.jobs.internal.Heartbeat;
import dev.stagger.jobs.internal.JobRunner;
import dev.stagger.jobs.internal.JobStore;
import dev.stagger.jobs.internal.Maintenance;
import dev.stagger.jobs.internal.Outcome;
import dev.stagger.jobs.internal.Pacer;
import dev.stagger.jobs.internal.PgWakeups;
import dev.stagger.jobs.internal.PoolEvents;
import dev.stagger.jobs.internal.PoolSignals;
import dev.stagger.jobs.internal.ReconnectingLoop;
import dev.stagger.jobs.internal.Rescuer;
import dev.stagger.jobs.internal.Statements;
import dev.stagger.jobs.internal.StoreFailures;
import dev.stagger.jobs.internal.StoredTimes;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

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
    /**
     * Finished jobs whose outcome may wait to be stored, beyond one per handler: room for the
     * fetcher to claim the next jobs while the completer stores the last ones. A pool killed at
     * that moment leaves at most this many (plus its running jobs) to be run again after their lease.
     */
    private static final int UNSTORED_ROOM = 256;

    private final JobQueue jobQueue;
    private final Clock clock;
    private final String queue;
    private final int concurrency;
    private final int batchSize;
    private final Map<String, JobHandler> handlers;
    private final Map<String, RetryPolicy> policies;
    private final RetryPolicy defaultPolicy;
    private final long leaseMillis;
    private final long heartbeatNanos;
    private final long rescueNanos;
    private final long pollNanos;
    private final long purgeNanos;
    private final long statsNanos;
    private final Map<JobState, Long> retentionMillis;
    private final Duration shutdownTimeout;
    private final boolean listen;
    private final PoolEvents events;
    private final JobStore store;
    private final JobRunner runner;
    private final Rescuer rescuer;
    private final PoolSignals signals;

    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean forced = new AtomicBoolean();
    private final AtomicInteger activeHandlers = new AtomicInteger();
    private final Pacer stopping;
    private final List<Thread> threads = new ArrayList<>();
    private ExecutorService workers;
    private Fetcher fetcher;
    private Completer completer;
    private Thread fetcherThread;
    /** Pool threads whose loop has ended: set before their last wake, where isAlive() may still say true. */
    private final Set<Thread> ended = ConcurrentHashMap.newKeySet();
    /** The jobs this pool handed to a handler and has not stored the outcome of: the heartbeat extends exactly these. */
    private final Set<Long> held = ConcurrentHashMap.newKeySet();
    private volatile Object localHandle;

    private WorkerPool(Builder b) {
        this.jobQueue = b.jobQueue;
        this.clock = b.jobQueue.clock();
        this.queue = b.queue;
        this.concurrency = b.concurrency;
        this.batchSize = b.batchSize > 0 ? b.batchSize : b.concurrency;
        this.handlers = Map.copyOf(b.handlers);
        this.policies = Map.copyOf(b.policies);
        this.defaultPolicy = b.policy;
        this.leaseMillis = b.lease.toMillis();
        this.heartbeatNanos = (b.heartbeat != null ? b.heartbeat : b.lease.dividedBy(3)).toNanos();
        this.rescueNanos = (b.rescueInterval != null ? b.rescueInterval : b.lease.dividedBy(2)).toNanos();
        this.pollNanos = b.pollInterval.toNanos();
        this.purgeNanos = b.purgeInterval.toNanos();
        this.statsNanos = b.statsInterval.toNanos();
        this.retentionMillis = Map.copyOf(b.retention);
        this.shutdownTimeout = b.shutdownTimeout;
        this.listen = b.listen && b.jobQueue.tables().dialect() == Dialect.POSTGRESQL;
        this.events = new PoolEvents(b.listener, clock);
        // a fresh suffix per pool: a restarted pool must not extend the leases its crashed predecessor held
        String id = (b.workerId != null ? b.workerId : queue) + "-" + UUID.randomUUID().toString().substring(0, 8);
        this.store = new JobStore(b.jobQueue.tables(), clock, queue, new ArrayList<>(handlers.keySet()), id,
                retentionMillis.getOrDefault(JobState.SUCCEEDED, -1L) == 0);
        this.signals = new PoolSignals(b.random, (e, d) -> events.databaseError(reported(e), d));
        this.runner = new JobRunner(store, clock, b.random, () -> !signals.claiming(), forced::get);
        this.rescuer = new Rescuer(store, runner, this::policyFor, events, signals::claiming);
        this.stopping = new Pacer(clock);
    }

    /** Starts building a pool for {@code queue} of {@code jobQueue}. */
    public static Builder builder(JobQueue jobQueue, String queue) {
        return new Builder(jobQueue, queue);
    }

    /** This pool's lease owner id, stored on the jobs it holds. */
    public String workerId() {
        return store.lockedBy();
    }

    /** Starts the pool's threads. */
    public WorkerPool start() {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("worker pool " + workerId() + " was already started");
        }
        AtomicInteger n = new AtomicInteger();
        workers = Executors.newFixedThreadPool(concurrency, r -> {
            Thread t = new Thread(r, "stagger-jobs-" + queue + "-worker-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        Pacer fetcherPacer = signals.pacer(clock);
        fetcher = new Fetcher(store, signals, fetcherPacer, concurrency, concurrency + Math.max(batchSize, UNSTORED_ROOM),
                batchSize, leaseMillis,
                pollNanos, this::dispatch);
        Fetcher f = fetcher;
        completer = new Completer(store, events, f::stored, () -> f.carrying() && signals.claiming(), held);
        fetcher.completer(completer);
        signals.onStop(completer::finish);

        Pacer completerPacer = signals.pacer(clock);
        Thread completerThread = thread("completer", completerPacer,
                () -> !completer.finished() && signals.alive(), completer);
        fetcherThread = thread("fetcher", fetcherPacer, signals::claiming, fetcher);
        Pacer heartbeatPacer = signals.pacer(clock);
        threads.add(thread("heartbeat", heartbeatPacer, signals::alive,
                new Heartbeat(store, signals, heartbeatPacer, leaseMillis, heartbeatNanos, held)));
        Pacer maintenancePacer = signals.pacer(clock);
        threads.add(thread("maintenance", maintenancePacer, signals::claiming,
                new Maintenance(store, rescuer, events, signals, maintenancePacer, rescueNanos, retentionMillis,
                        purgeNanos, statsNanos)));
        if (listen) {
            threads.add(thread("listener", signals.pacer(clock), signals::claiming,
                    new PgWakeups(jobQueue.tables().channel, queue, fetcher::wake,
                            (int) Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(pollNanos), 1000)))));
        }
        completerThread.start();
        fetcherThread.start();
        threads.forEach(Thread::start);
        threads.add(0, completerThread);
        localHandle = jobQueue.addLocalPool(queue, fetcher::wake);
        return this;
    }

    /**
     * Claims and runs due jobs on the calling thread until none is due, after rescuing expired
     * leases. Returns how many attempts ran. For tests on a virtual clock and cron-style runs.
     *
     * @throws dev.stagger.jdbc.StoreException if the database fails
     */
    public int runAvailable() {
        int ran = 0;
        Statements statements = new Statements();
        try (Connection c = jobQueue.connection()) {
            rescuer.rescueAll(c);
            while (true) {
                List<JobStore.Claimed> claimed = store.claim(statements, c, batchSize, leaseMillis);
                if (claimed.isEmpty()) {
                    return ran;
                }
                for (JobStore.Claimed next : claimed) {
                    Outcome outcome = runOne(next);
                    events.stored(outcome, store.apply(statements, c, List.of(outcome))[0]);
                    ran++;
                }
            }
        } catch (SQLException e) {
            throw StoreFailures.wrap("runAvailable", jobQueue.tables().jobs, e, false);
        }
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
        // the timeout counts from before anyone can see the pool stopping
        long deadline = clock.nanoTime() + Math.min(Checks.nanos(timeout), Long.MAX_VALUE / 4);
        signals.stopClaiming();
        if (localHandle != null) {
            jobQueue.removeLocalPool(localHandle);
        }
        if (!started.get()) {
            signals.stopAll();
            return true;
        }
        boolean clean = true;
        Completer waiting = completer;
        if (waiting != null) {
            waiting.recheck(); // the fetcher carries no more successes: the completer stores them
        }
        try {
            stopping.awaitUntil(deadline, () -> ended.contains(fetcherThread));
            workers.shutdown();
            stopping.awaitUntil(deadline, () -> activeHandlers.get() == 0);
            if (activeHandlers.get() > 0) {
                clean = false;
                forced.set(true);
                // claimed jobs still queued for a handler never started: give them back uncounted (claiming has
                // stopped, so running the task only records a RELEASE) instead of leaving them to lease expiry
                for (Runnable unstarted : workers.shutdownNow()) {
                    unstarted.run();
                }
                workers.awaitTermination(1, TimeUnit.SECONDS); // interrupted handlers end at once; a bound all the same
            }
            completer.finish();
            // the completer stores what is left; leases of anything it cannot store will expire
            long storing = Math.max(deadline, clock.nanoTime() + TimeUnit.SECONDS.toNanos(1));
            stopping.awaitUntil(storing, completer::finished);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            clean = false;
        } finally {
            signals.stopAll();
        }
        for (Thread t : threads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return clean;
    }

    // ---- threads ----------------------------------------------------------------------------

    private Thread thread(String role, Pacer pacer, BooleanSupplier running, ReconnectingLoop.Step step) {
        ReconnectingLoop loop = new ReconnectingLoop(jobQueue::connection, signals, pacer, running, step);
        Thread t = new Thread(() -> {
            try {
                loop.run();
            } finally {
                // recorded before the wake: a thread is still alive while it runs this, so a stopping pool
                // that asked isAlive() here would wait out its whole timeout
                ended.add(Thread.currentThread());
                stopping.wake();
            }
        }, "stagger-jobs-" + queue + "-" + role);
        t.setDaemon(true);
        return t;
    }

    /** Runs a claimed job on a handler thread (the fetcher claimed it for a free one). */
    private void dispatch(JobStore.Claimed claimed) {
        held.add(claimed.job().id());
        activeHandlers.incrementAndGet();
        Runnable task = () -> {
            try {
                completer.add(runOne(claimed));
            } finally {
                activeHandlers.decrementAndGet();
                fetcher.handlerFree();
                stopping.wake();
            }
        };
        try {
            workers.execute(task);
        } catch (RejectedExecutionException stopped) {
            task.run(); // a shutdown overtook this claim: claiming has stopped, so this puts the job back
        }
    }

    private Outcome runOne(JobStore.Claimed claimed) {
        Job job = claimed.job();
        if (!signals.claiming()) {
            return Outcome.release(job);
        }
        events.started(job);
        return runner.run(claimed, handlers.get(job.type()), policyFor(job.type()));
    }

    private RetryPolicy policyFor(String type) {
        return policies.getOrDefault(type, defaultPolicy);
    }

    /** A database failure as the listener sees it: unchecked, and naming no bound value. */
    private Exception reported(Exception e) {
        return e instanceof SQLException s ? StoreFailures.wrap("worker pool " + workerId(), jobQueue.tables().jobs, s, false) : e;
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
        private Duration heartbeat;
        private Duration rescueInterval;
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration shutdownTimeout = Duration.ofSeconds(30);
        private Duration purgeInterval = Duration.ofHours(1);
        private Duration statsInterval = Duration.ofSeconds(30);
        private boolean listen = true;
        private JobListener listener = new JobListener() {
        };
        private RandomSource random = RandomSource.threadLocal();
        private String workerId;

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
