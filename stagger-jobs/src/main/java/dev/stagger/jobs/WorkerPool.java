package dev.stagger.jobs;

import dev.stagger.Clock;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.Dialect;
import dev.stagger.jobs.internal.JobRunner;
import dev.stagger.jobs.internal.JobStore;
import dev.stagger.jobs.internal.Outcome;
import dev.stagger.jobs.internal.PgWakeups;
import dev.stagger.jobs.internal.PoolSignals;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Runs the jobs of one queue with up to {@code concurrency} handlers at a time.
 *
 * <p>How it works: a fetcher claims due jobs in batches (up to {@code batchSize} ahead of the
 * free handlers) under a lease (PostgreSQL
 * {@code FOR UPDATE SKIP LOCKED}; SQLite one atomic {@code UPDATE ... RETURNING}), worker threads
 * run the handlers, and a completer stores the outcomes in batches, each change guarded by "this
 * pool still holds this attempt". A maintenance thread extends the leases of the jobs the pool
 * holds (heartbeat) and rescues jobs of the queue whose lease ran out because their worker died.
 * An idle pool is woken at once by jobs enqueued through the same {@link JobQueue} object (any
 * database) and, on PostgreSQL, by LISTEN/NOTIFY from any process; polling is the fallback. After a
 * database failure each thread reconnects with exponential backoff; the stored state stays
 * consistent because every change is conditional.
 *
 * <p>Timing: stored times (run-at, leases) come from the queue's {@link Clock}; the pool's own
 * threads poll, heartbeat and back off in real time.
 *
 * <p>Lifecycle: {@link #start()} once, {@link #shutdown(Duration)} (or {@link #close()}) once.
 * {@link #runAvailable()} runs due jobs on the calling thread instead, for tests and cron-style
 * use. Thread-safe.
 */
public final class WorkerPool implements AutoCloseable {
    private final JobQueue jobQueue;
    private final DataSource dataSource;
    private final Clock clock;
    private final String queue;
    private final int concurrency;
    private final int batchSize;
    private final Map<String, JobHandler> handlers;
    private final Map<String, RetryPolicy> policies;
    private final RetryPolicy defaultPolicy;
    private final long leaseMillis;
    private final long heartbeatMillis;
    private final long rescueMillis;
    private final long pollMillis;
    private final Duration shutdownTimeout;
    private final boolean listen;
    private final JobListener listener;
    private final JobStore store;
    private final JobRunner runner;
    private final PoolSignals signals;

    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean forced = new AtomicBoolean();
    private final Semaphore slots;
    private final Semaphore wake = new Semaphore(0);
    private final LinkedBlockingQueue<Outcome> outcomes = new LinkedBlockingQueue<>();
    private final AtomicInteger pendingOutcomes = new AtomicInteger();
    private final List<Thread> threads = new ArrayList<>();
    private ExecutorService workers;
    private Thread completer;
    private volatile Object localHandle;

    private WorkerPool(Builder b) {
        this.jobQueue = b.jobQueue;
        this.dataSource = b.jobQueue.dataSource();
        this.clock = b.jobQueue.clock();
        this.queue = b.queue;
        this.concurrency = b.concurrency;
        this.batchSize = b.batchSize > 0 ? b.batchSize : b.concurrency;
        this.handlers = Map.copyOf(b.handlers);
        this.policies = Map.copyOf(b.policies);
        this.defaultPolicy = b.retryPolicy;
        this.leaseMillis = b.lease.toMillis();
        this.heartbeatMillis = (b.heartbeat != null ? b.heartbeat : b.lease.dividedBy(3)).toMillis();
        this.rescueMillis = (b.rescueInterval != null ? b.rescueInterval : b.lease.dividedBy(2)).toMillis();
        this.pollMillis = b.pollInterval.toMillis();
        this.shutdownTimeout = b.shutdownTimeout;
        this.listen = b.listen && b.jobQueue.tables().dialect() == Dialect.POSTGRESQL;
        this.listener = b.listener;
        // a fresh suffix per pool: a restarted pool must not extend the leases its crashed predecessor held
        String id = (b.workerId != null ? b.workerId : queue) + "-" + UUID.randomUUID().toString().substring(0, 8);
        this.store = new JobStore(b.jobQueue.tables(), queue, new ArrayList<>(handlers.keySet()), id);
        this.signals = new PoolSignals(b.random, (e, d) -> notifyListener(l -> l.databaseError(e, d)));
        this.runner = new JobRunner(store, clock, b.random, () -> !signals.claiming(), forced::get);
        this.slots = new Semaphore(concurrency + batchSize);
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
        completer = thread("completer", this::completeLoop);
        threads.add(thread("fetcher", this::fetchLoop));
        threads.add(thread("maintenance", this::maintenanceLoop));
        if (listen) {
            threads.add(thread("listener", new PgWakeups(dataSource, jobQueue.tables().channel, queue,
                    this::wakeUp, signals, (int) Math.min(pollMillis, 1000))));
        }
        completer.start();
        threads.forEach(Thread::start);
        localHandle = jobQueue.addLocalPool(queue, this::wakeUp);
        return this;
    }

    /**
     * Claims and runs due jobs on the calling thread until none is due, after rescuing expired
     * leases. Returns how many attempts ran. For tests on a virtual clock and cron-style runs.
     */
    public int runAvailable() throws SQLException {
        int ran = 0;
        try (Connection c = jobQueue.connection()) {
            rescue(c);
            while (true) {
                long now = clock.currentTimeMillis();
                List<JobStore.Claimed> claimed = store.claim(c, batchSize, now, now + leaseMillis);
                if (claimed.isEmpty()) {
                    return ran;
                }
                for (JobStore.Claimed next : claimed) {
                    Outcome outcome = runOne(next);
                    boolean[] applied = store.apply(c, List.of(outcome), clock.currentTimeMillis());
                    report(outcome, applied[0]);
                    ran++;
                }
            }
        }
    }

    /** {@link #shutdown(Duration)} with the configured shutdown timeout. */
    @Override
    public void close() {
        shutdown(shutdownTimeout);
    }

    /**
     * Stops gracefully: claims nothing more, puts back claimed jobs that have not started, waits up
     * to {@code timeout} for running handlers, then interrupts the rest (their jobs go back to the
     * queue, the attempt not counted) and stores every outcome it can.
     *
     * @return true if every running job finished within the timeout
     */
    public boolean shutdown(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
        }
        signals.stopClaiming();
        if (localHandle != null) {
            jobQueue.removeLocalPool(localHandle);
        }
        wakeUp();
        if (!started.get()) {
            signals.stopAll();
            return true;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean clean = true;
        try {
            join(threads.get(0), deadline);
            workers.shutdown();
            if (!workers.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                clean = false;
                forced.set(true);
                // claimed jobs still queued for a handler never started: give them back uncounted (claiming has
                // stopped, so running the task only records a RELEASE) instead of leaving them to lease expiry
                for (Runnable unstarted : workers.shutdownNow()) {
                    unstarted.run();
                }
                workers.awaitTermination(1, TimeUnit.SECONDS);
            }
            // the completer stores what is left; leases of anything it cannot store will expire
            completer.join(Math.max(1000, (deadline - System.nanoTime()) / 1_000_000));
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

    private Thread thread(String role, Runnable body) {
        Thread t = new Thread(body, "stagger-jobs-" + queue + "-" + role);
        t.setDaemon(true);
        return t;
    }

    private void fetchLoop() {
        Connection c = null;
        PoolSignals.Reconnect reconnect = signals.reconnect();
        while (signals.claiming()) {
            int wanted = 0;
            try {
                if (!slots.tryAcquire(pollMillis, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                wanted = 1;
                int more = Math.min(batchSize - 1, slots.availablePermits());
                if (more > 0 && slots.tryAcquire(more)) {
                    wanted += more;
                }
                if (!signals.claiming()) {
                    slots.release(wanted);
                    break;
                }
                if (c == null) {
                    c = jobQueue.connection();
                }
                long now = clock.currentTimeMillis();
                List<JobStore.Claimed> claimed = store.claim(c, wanted, now, now + leaseMillis);
                reconnect.succeeded();
                slots.release(wanted - claimed.size());
                for (JobStore.Claimed next : claimed) {
                    Runnable task = () -> outcomes.add(runOne(next));
                    try {
                        workers.execute(task);
                    } catch (RejectedExecutionException stopped) {
                        task.run(); // a shutdown overtook this claim: claiming has stopped, so this puts the job back
                    }
                }
                if (claimed.size() < wanted) {
                    // the queue is drained for now: sleep until notified or the next poll
                    wake.tryAcquire(pollMillis, TimeUnit.MILLISECONDS);
                    wake.drainPermits();
                }
            } catch (InterruptedException e) {
                slots.release(wanted);
                break;
            } catch (SQLException | RuntimeException e) {
                slots.release(wanted);
                c = closeQuietly(c);
                reconnect.pauseAfter(e);
            }
        }
        closeQuietly(c);
    }

    private Outcome runOne(JobStore.Claimed claimed) {
        pendingOutcomes.incrementAndGet();
        Job job = claimed.job();
        if (!signals.claiming()) {
            return new Outcome(Outcome.Kind.RELEASE, job, clock.currentTimeMillis(), null, 0);
        }
        JobHandler handler = handlers.get(job.type());
        notifyListener(l -> l.started(job));
        return runner.run(claimed, handler, policyFor(job.type()));
    }

    private void completeLoop() {
        Connection c = null;
        PoolSignals.Reconnect reconnect = signals.reconnect();
        List<Outcome> batch = new ArrayList<>();
        while (true) {
            try {
                if (batch.isEmpty()) {
                    Outcome first = outcomes.poll(100, TimeUnit.MILLISECONDS);
                    if (first == null) {
                        if (workersDone() && outcomes.isEmpty()) {
                            break;
                        }
                        continue;
                    }
                    batch.add(first);
                    outcomes.drainTo(batch, 999);
                }
                if (c == null) {
                    c = jobQueue.connection();
                }
                boolean[] applied = store.apply(c, batch, clock.currentTimeMillis());
                reconnect.succeeded();
                pendingOutcomes.addAndGet(-batch.size());
                slots.release(batch.size());
                for (int i = 0; i < batch.size(); i++) {
                    report(batch.get(i), applied[i]);
                }
                batch.clear();
            } catch (InterruptedException e) {
                break;
            } catch (SQLException | RuntimeException e) {
                c = closeQuietly(c);
                if (!signals.alive()) {
                    break; // shutdown gave up: the unsaved jobs' leases will expire and they will be rescued
                }
                reconnect.pauseAfter(e);
            }
        }
        closeQuietly(c);
    }

    private boolean workersDone() {
        return !signals.claiming() && workers.isTerminated() && pendingOutcomes.get() <= outcomes.size();
    }

    private void maintenanceLoop() {
        Connection c = null;
        PoolSignals.Reconnect reconnect = signals.reconnect();
        long lastRescue = System.nanoTime() / 1_000_000 - rescueMillis; // nanoTime may be negative: rescue at once
        while (signals.alive()) {
            try {
                if (c == null) {
                    c = jobQueue.connection();
                }
                long now = clock.currentTimeMillis();
                store.heartbeat(c, now + leaseMillis);
                long real = System.nanoTime() / 1_000_000;
                if (signals.claiming() && real - lastRescue >= rescueMillis) {
                    rescue(c);
                    lastRescue = real;
                }
                reconnect.succeeded();
                signals.pauseFor(Duration.ofMillis(heartbeatMillis));
            } catch (SQLException | RuntimeException e) {
                c = closeQuietly(c);
                reconnect.pauseAfter(e);
            }
        }
        closeQuietly(c);
    }

    private void rescue(Connection c) throws SQLException {
        for (JobStore.Rescued r : store.rescue(c, clock.currentTimeMillis(), t -> policyFor(t).maxAttempts())) {
            notifyListener(l -> l.rescued(r.id(), r.attempt(), r.state()));
        }
    }

    private void wakeUp() {
        if (wake.availablePermits() == 0) {
            wake.release();
        }
    }

    private RetryPolicy policyFor(String type) {
        return policies.getOrDefault(type, defaultPolicy);
    }

    private void report(Outcome o, boolean applied) {
        if (!applied && !(o.kind() == Outcome.Kind.SUCCEEDED && o.completedWithin())) {
            return; // the lease was lost: whoever holds the job now reports it
        }
        Job job = o.job();
        switch (o.kind()) {
            case SUCCEEDED -> notifyListener(l -> l.succeeded(job, Duration.ofNanos(o.runNanos())));
            case RETRY -> notifyListener(l -> l.retried(job, o.error(), Instant.ofEpochMilli(o.runAtMillis())));
            case DEAD -> notifyListener(l -> l.dead(job, o.error(), o.endReason()));
            case SNOOZE -> notifyListener(l -> l.snoozed(job, Instant.ofEpochMilli(o.runAtMillis())));
            case RELEASE -> {
                // put back unstarted or interrupted at shutdown: nothing happened to the job
            }
        }
    }

    private void notifyListener(java.util.function.Consumer<JobListener> event) {
        try {
            event.accept(listener);
        } catch (RuntimeException ignored) {
            // a listener must not break the pool
        }
    }

    private static Connection closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // already broken
            }
        }
        return null;
    }

    private static void join(Thread t, long deadlineNanos) throws InterruptedException {
        t.join(Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000));
    }

    @Override
    public String toString() {
        return "WorkerPool{queue=" + queue + ", id=" + workerId() + ", concurrency=" + concurrency + "}";
    }

    /** Builds a {@link WorkerPool}. Not thread-safe. */
    public static final class Builder {
        private final JobQueue jobQueue;
        private final String queue;
        private final Map<String, JobHandler> handlers = new LinkedHashMap<>();
        private final Map<String, RetryPolicy> policies = new LinkedHashMap<>();
        private int concurrency = 4;
        private int batchSize;
        private RetryPolicy retryPolicy = RetryPolicy.background();
        private Duration lease = Duration.ofSeconds(30);
        private Duration heartbeat;
        private Duration rescueInterval;
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration shutdownTimeout = Duration.ofSeconds(30);
        private boolean listen = true;
        private JobListener listener = new JobListener() {
        };
        private RandomSource random = RandomSource.threadLocal();
        private String workerId;

        private Builder(JobQueue jobQueue, String queue) {
            if (jobQueue == null) {
                throw new IllegalArgumentException("jobQueue must not be null");
            }
            this.jobQueue = jobQueue;
            this.queue = JobQueue.checkName("queue", queue);
        }

        /** Runs jobs of {@code type} with {@code handler}, under the pool's retry policy. */
        public Builder handler(String type, JobHandler handler) {
            JobQueue.checkName("type", type);
            if (handler == null) {
                throw new IllegalArgumentException("handler for type '" + type + "' must not be null");
            }
            handlers.put(type, handler);
            return this;
        }

        /** Runs jobs of {@code type} with {@code handler} under {@code policy}. */
        public Builder handler(String type, JobHandler handler, RetryPolicy policy) {
            handler(type, handler);
            if (policy == null) {
                throw new IllegalArgumentException("policy for type '" + type + "' must not be null");
            }
            policies.put(type, policy);
            return this;
        }

        /**
         * The policy for types registered without one; default {@link RetryPolicy#background()}.
         * A job's failures are decided by the core {@link dev.stagger.RetryEngine}, as a
         * {@link dev.stagger.Retry} call's are: the classifier (retry or dead), maxAttempts (unless
         * the job sets its own), the backoff (with its jitter, one schedule across the job's
         * attempts) plus any {@code retryAfter} hint, and the deadline, counted from the start of
         * the job's first attempt. A handler that returns is a success: the classifier sees only
         * failures. The attempt timeout does not apply to jobs.
         */
        public Builder retryPolicy(RetryPolicy policy) {
            if (policy == null) {
                throw new IllegalArgumentException("retryPolicy must not be null");
            }
            this.retryPolicy = policy;
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
         * Most jobs claimed per query; default the concurrency. The pool also holds up to this many
         * claimed jobs waiting for a free handler, so claiming overlaps running; those are put back
         * at shutdown without counting an attempt.
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > 1000) {
                throw new IllegalArgumentException("batchSize must be in [1, 1000], got " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * How long a claim lasts without a heartbeat; default 30 s. A job whose worker dies runs
         * again elsewhere about this long after the last heartbeat. At least 500 ms.
         */
        public Builder lease(Duration lease) {
            if (lease == null || lease.toMillis() < 500) {
                throw new IllegalArgumentException("lease must be at least 500 ms, got " + lease);
            }
            this.lease = lease;
            return this;
        }

        /** How often held leases are extended; default a third of the lease; must be shorter than the lease. */
        public Builder heartbeatInterval(Duration heartbeat) {
            if (heartbeat == null || heartbeat.toMillis() < 10) {
                throw new IllegalArgumentException("heartbeatInterval must be at least 10 ms, got " + heartbeat);
            }
            this.heartbeat = heartbeat;
            return this;
        }

        /** How often this pool looks for expired leases in its queue; default half the lease. */
        public Builder rescueInterval(Duration rescueInterval) {
            if (rescueInterval == null || rescueInterval.toMillis() < 10) {
                throw new IllegalArgumentException("rescueInterval must be at least 10 ms, got " + rescueInterval);
            }
            this.rescueInterval = rescueInterval;
            return this;
        }

        /**
         * How often an idle pool looks for due jobs; default 1 s. Jobs scheduled for later (retries,
         * delays) start within this of their time. Jobs enqueued through the same {@link JobQueue}
         * object, and on PostgreSQL from any process, wake the pool at once.
         */
        public Builder pollInterval(Duration pollInterval) {
            if (pollInterval == null || pollInterval.toMillis() < 1) {
                throw new IllegalArgumentException("pollInterval must be at least 1 ms, got " + pollInterval);
            }
            this.pollInterval = pollInterval;
            return this;
        }

        /** Default timeout of {@link WorkerPool#close()}; default 30 s. */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            if (shutdownTimeout == null || shutdownTimeout.isNegative()) {
                throw new IllegalArgumentException("shutdownTimeout must not be negative, got " + shutdownTimeout);
            }
            this.shutdownTimeout = shutdownTimeout;
            return this;
        }

        /** On PostgreSQL, wake on NOTIFY (default true); false polls only. Ignored on SQLite. */
        public Builder listen(boolean listen) {
            this.listen = listen;
            return this;
        }

        public Builder listener(JobListener listener) {
            if (listener == null) {
                throw new IllegalArgumentException("listener must not be null");
            }
            this.listener = listener;
            return this;
        }

        /** Randomness for backoff jitter; default thread-local. */
        public Builder random(RandomSource random) {
            if (random == null) {
                throw new IllegalArgumentException("random must not be null");
            }
            this.random = random;
            return this;
        }

        /**
         * A readable name for this pool, stored (with a random suffix added per pool) as the lease
         * owner of the jobs it holds; default the queue name.
         */
        public Builder workerId(String workerId) {
            if (workerId == null || workerId.isBlank() || workerId.length() > 90) {
                throw new IllegalArgumentException("workerId must be 1 to 90 non-blank characters, got '" + workerId + "'");
            }
            this.workerId = workerId;
            return this;
        }

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
    }
}
