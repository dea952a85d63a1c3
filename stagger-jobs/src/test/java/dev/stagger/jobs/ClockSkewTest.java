package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.Clock;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.UrlDataSource;
import dev.stagger.testsupport.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Workers on machines whose clocks disagree share one PostgreSQL: leases, run-at times and rescue
 * are compared with the database's clock, so a clock a minute ahead rescues nothing early and one
 * a minute behind rescues on time.
 */
class ClockSkewTest {
    static final Duration LEASE = Duration.ofMillis(1000);

    UrlDataSource ds;
    String prefix;
    final List<WorkerPool> pools = new ArrayList<>();
    final Map<Long, AtomicInteger> running = new ConcurrentHashMap<>();
    final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
    final Set<Long> overlapped = ConcurrentHashMap.newKeySet();

    @BeforeEach
    void setUp() {
        ds = Stores.postgres();
        prefix = Stores.uniquePrefix();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (WorkerPool p : pools) {
            p.shutdown(Duration.ofSeconds(5));
        }
        Stores.dropPostgres(ds, prefix);
    }

    /** The system clock, with its wall-clock reading moved by {@code skew}. */
    static Clock skewed(Duration skew) {
        Clock system = Clock.system();
        return new Clock() {
            @Override
            public long nanoTime() {
                return system.nanoTime();
            }

            @Override
            public long currentTimeMillis() {
                return system.currentTimeMillis() + skew.toMillis();
            }

            @Override
            public void sleep(long nanos) throws InterruptedException {
                system.sleep(nanos);
            }

            @Override
            public Cancellable schedule(Runnable task, long delayNanos) {
                return system.schedule(task, delayNanos);
            }
        };
    }

    private JobQueue queueOn(Duration skew) throws Exception {
        return JobQueue.builder(ds).tablePrefix(prefix).clock(skewed(skew)).build();
    }

    private WorkerPool started(JobQueue jobs, String name, long handlerMillis) {
        WorkerPool pool = WorkerPool.builder(jobs, "q").workerId(name).concurrency(2)
                .handler("work", ctx -> {
                    long id = ctx.job().id();
                    runs.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                    if (running.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet() > 1) {
                        overlapped.add(id);
                    }
                    try {
                        Thread.sleep(handlerMillis);
                    } finally {
                        running.get(id).decrementAndGet();
                    }
                })
                .policy(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .lease(LEASE).heartbeatInterval(Duration.ofMillis(250)).rescueInterval(Duration.ofMillis(100))
                .pollInterval(Duration.ofMillis(100)).build();
        pools.add(pool);
        return pool.start();
    }

    @Test
    void aPoolWhoseClockRunsAMinuteAheadRescuesNoLiveJobAndNoJobRunsTwice() throws Exception {
        JobQueue behind = queueOn(Duration.ofSeconds(-60));
        JobQueue ahead = queueOn(Duration.ofSeconds(60));
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ids.add(behind.enqueue("q", "work", "job-" + i));
        }
        // each job runs for three leases, so only heartbeats keep it; both pools rescue every 100 ms
        started(behind, "behind", 3 * LEASE.toMillis());
        started(ahead, "ahead", 3 * LEASE.toMillis());
        Await.until("every job done", Duration.ofSeconds(60),
                () -> behind.admin().countByState("q").get(JobState.SUCCEEDED) == ids.size());

        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(overlapped).as("jobs run twice at the same time").isEmpty();
        for (long id : ids) {
            soft.assertThat(runs.get(id)).as("runs of job %d", id).hasValue(1);
            soft.assertThat(behind.admin().errors(id)).as("errors of job %d", id).isEmpty();
        }
        soft.assertAll();
    }

    @Test
    void aPoolWhoseClockRunsAMinuteBehindRescuesAnExpiredLeaseOnTime() throws Exception {
        JobQueue behind = queueOn(Duration.ofSeconds(-60));
        long id = behind.enqueue("q", "work", "orphan");
        // a worker on a machine with a correct clock claimed the job and died at once
        Stores.exec(ds, "UPDATE " + prefix + "jobs SET state = 'RUNNING', attempt = 1, locked_by = 'dead-worker', "
                + "lease_until = CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) + " + LEASE.toMillis()
                + ", started_at = 1, first_attempt_at = 1 WHERE id = " + id);
        started(behind, "behind", 0);

        // about a lease plus a rescue interval; a minute late with the worker's own clock
        Await.until("the orphan ran again", Duration.ofSeconds(20), () -> runs.containsKey(id));
        assertThat(behind.admin().find(id).orElseThrow().attempt()).isEqualTo(2);
    }
}
