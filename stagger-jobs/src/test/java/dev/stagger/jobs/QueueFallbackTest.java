package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.EndReason;
import dev.stagger.RandomSource;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.UrlDataSource;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link QueueFallback}: work that cannot be done now is queued once per key and done after recovery. */
class QueueFallbackTest {
    @TempDir
    Path dir;
    VirtualClock clock;
    JobQueue jobs;
    final List<RetryEvent.CallFinished> ends = new CopyOnWriteArrayList<>();
    final AtomicInteger calls = new AtomicInteger();
    final AtomicBoolean downstreamUp = new AtomicBoolean();
    final List<String> placed = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        clock = new VirtualClock();
        jobs = Stores.sqlite(dir, clock);
    }

    private Retry retry(RetryPolicy.Builder policy) {
        return Retry.of("orders", policy.build()).withClock(clock).withRandom(RandomSource.sequence(0.5))
                .withListener(new RetryListener() {
                    @Override
                    public void onCallFinished(RetryEvent.CallFinished event) {
                        ends.add(event);
                    }
                });
    }

    private static RetryPolicy.Builder fixed(int maxAttempts) {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofSeconds(1)));
    }

    private Retry endingWith(EndReason reason) {
        switch (reason) {
            case EXHAUSTED:
                return retry(fixed(3));
            case NOT_RETRYABLE:
                return retry(fixed(3).abortOn(IOException.class));
            case DEADLINE:
                return retry(fixed(10).deadline(Duration.ofMillis(1500)));
            case BUDGET: {
                RetryBudget empty = RetryBudget.builder("empty").maxTokens(1).minRetriesPerSecond(0).clock(clock).build();
                empty.tryAcquireRetry();
                return retry(fixed(3)).withBudget(empty);
            }
            case CIRCUIT_OPEN: {
                CircuitBreaker breaker = CircuitBreaker.builder("warehouse").consecutiveFailures(1).clock(clock).build();
                catchThrowable(() -> breaker.call(() -> {
                    throw new IOException("another caller's failure");
                }));
                return retry(fixed(3)).withCircuitBreaker(breaker);
            }
            case THROTTLED: {
                // the warehouse rejected everything lately, and the draw (0) is below any p > 0
                AdaptiveThrottle rejecting = AdaptiveThrottle.builder("warehouse").clock(clock)
                        .random(RandomSource.sequence(0.0)).build();
                for (int i = 0; i < 10; i++) {
                    rejecting.onRejected();
                }
                return retry(fixed(3)).withThrottle(rejecting);
            }
            default:
                throw new AssertionError(reason);
        }
    }

    /** The downstream: refuses while down, records the order once up. */
    private String place(String order) throws IOException {
        calls.incrementAndGet();
        if (!downstreamUp.get()) {
            throw new IOException("warehouse unreachable");
        }
        placed.add(order);
        return "receipt for " + order;
    }

    static Stream<Arguments> reasonsAndModes() {
        List<Arguments> all = new ArrayList<>();
        for (EndReason reason : List.of(EndReason.EXHAUSTED, EndReason.NOT_RETRYABLE, EndReason.DEADLINE,
                EndReason.BUDGET, EndReason.CIRCUIT_OPEN, EndReason.THROTTLED)) {
            all.add(Arguments.of(reason, false));
            all.add(Arguments.of(reason, true));
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0}, async={1}")
    @MethodSource("reasonsAndModes")
    void everyChosenEndReasonDefersTheWorkToTheQueue(EndReason reason, boolean async) throws Exception {
        QueueFallback orders = QueueFallback.builder(jobs, "orders", "place").reasons(EndReason.EXHAUSTED,
                EndReason.NOT_RETRYABLE, EndReason.DEADLINE, EndReason.BUDGET, EndReason.CIRCUIT_OPEN,
                EndReason.THROTTLED).build();
        Retry retry = endingWith(reason);

        Deferrable<String> answer;
        if (async) {
            CompletableFuture<Deferrable<String>> future = orders.callAsync(retry, "order-1", "{\"sku\":\"A1\"}",
                    () -> {
                        calls.incrementAndGet();
                        return CompletableFuture.<String>failedFuture(new IOException("warehouse unreachable"));
                    });
            clock.runUntilIdle();
            answer = future.join();
        } else {
            answer = orders.call(retry, "order-1", "{\"sku\":\"A1\"}", () -> place("A1"));
        }

        assertThat(answer.isDeferred()).isTrue();
        Deferred deferred = answer.deferred().orElseThrow();
        assertThat(deferred.reason()).isEqualTo(reason);
        Job job = jobs.admin().find(deferred.jobId()).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.AVAILABLE);
        assertThat(job.jobKey()).contains("order-1");
        assertThat(job.payloadText()).isEqualTo("{\"sku\":\"A1\"}");
        assertThat(ends).singleElement().satisfies(end -> {
            assertThat(end.reason()).isEqualTo(reason);
            assertThat(end.servedByFallback()).isTrue();
            assertThat(end.fallback().kind()).isEqualTo("queue");
        });
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = EndReason.class, names = {"CIRCUIT_OPEN", "BUDGET", "DEADLINE", "EXHAUSTED", "THROTTLED"})
    void theDefaultReasonsDeferTheWorkToTheQueue(EndReason reason) throws Exception {
        QueueFallback orders = QueueFallback.builder(jobs, "orders", "place").build();

        Deferrable<String> answer = orders.call(endingWith(reason), "order-1", "{}", () -> place("A1"));

        assertThat(answer.isDeferred()).isTrue();
        assertThat(answer.deferred().orElseThrow().reason()).isEqualTo(reason);
        assertThat(jobs.admin().countByState("orders").getOrDefault(JobState.AVAILABLE, 0L)).isEqualTo(1);
    }

    @Test
    void aPermanentFailureIsNotQueuedByDefault() {
        QueueFallback orders = QueueFallback.builder(jobs, "orders", "place").build();

        Throwable thrown = catchThrowable(() -> orders.call(endingWith(EndReason.NOT_RETRYABLE), "order-1", "{}",
                () -> place("A1")));

        assertThat(thrown).isInstanceOf(IOException.class);
        assertThat(jobs.admin().countByState("orders").getOrDefault(JobState.AVAILABLE, 0L)).isZero();
    }

    @Test
    void aSuccessIsAnsweredWithItsValueAndQueuesNothing() throws Exception {
        downstreamUp.set(true);
        QueueFallback orders = QueueFallback.builder(jobs, "orders", "place").build();

        Deferrable<String> answer = orders.call(retry(fixed(3)), "order-1", "{}", () -> place("A1"));

        assertThat(answer.isDeferred()).isFalse();
        assertThat(answer.value()).isEqualTo("receipt for A1");
        assertThat(jobs.admin().countByState("orders").getOrDefault(JobState.AVAILABLE, 0L)).isZero();
    }

    @Test
    void concurrentFallbacksForOneKeyEnqueueOneJobOnSqlite() throws Exception {
        assertConcurrentFallbacksEnqueueOnce(jobs);
    }

    @Test
    void concurrentFallbacksForOneKeyEnqueueOneJobOnPostgresql() throws Exception {
        UrlDataSource ds = Stores.postgres();
        String prefix = Stores.uniquePrefix();
        try {
            assertConcurrentFallbacksEnqueueOnce(JobQueue.builder(ds).tablePrefix(prefix).clock(clock).build());
        } finally {
            Stores.dropPostgres(ds, prefix);
        }
    }

    private void assertConcurrentFallbacksEnqueueOnce(JobQueue store) throws Exception {
        QueueFallback orders = QueueFallback.builder(store, "orders", "place").build();
        Retry retry = retry(fixed(1));
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Deferrable<String>>> answers = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                answers.add(pool.submit(() -> {
                    go.await();
                    return orders.call(retry, "order-42", "{\"sku\":\"A1\"}", () -> place("A1"));
                }));
            }
            go.countDown();
            Set<Long> ids = new HashSet<>();
            for (Future<Deferrable<String>> answer : answers) {
                ids.add(answer.get().deferred().orElseThrow().jobId());
            }
            assertThat(ids).hasSize(1);
            assertThat(calls).as("every call failed and fell back").hasValue(threads);
            assertThat(store.admin().countByState("orders").get(JobState.AVAILABLE)).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theDeferredJobCompletesOnceTheDownstreamIsBackOnSqlite() throws Exception {
        assertDeferredJobCompletesAfterRecovery(jobs);
    }

    @Test
    void theDeferredJobCompletesOnceTheDownstreamIsBackOnPostgresql() throws Exception {
        UrlDataSource ds = Stores.postgres();
        String prefix = Stores.uniquePrefix();
        try {
            assertDeferredJobCompletesAfterRecovery(JobQueue.builder(ds).tablePrefix(prefix).clock(clock)
                    .databaseClock(false).build());
        } finally {
            Stores.dropPostgres(ds, prefix);
        }
    }

    private void assertDeferredJobCompletesAfterRecovery(JobQueue store) throws Exception {
        QueueFallback orders = QueueFallback.builder(store, "orders", "place").build();
        Deferred deferred = orders.call(retry(fixed(2)), "order-7", "B7", () -> place("B7")).deferred().orElseThrow();
        WorkerPool workers = orders.workerPool(job -> place(job.payloadText()))
                .random(RandomSource.sequence(0.5)).build();

        assertThat(workers.runAvailable()).as("the job's first attempt: still down").isEqualTo(1);
        assertThat(store.admin().find(deferred.jobId()).orElseThrow().state()).isEqualTo(JobState.AVAILABLE);
        downstreamUp.set(true);
        clock.advance(Duration.ofMinutes(1)); // past the background policy's first wait (at most 1 s)
        workers.runAvailable();

        assertThat(store.admin().find(deferred.jobId()).orElseThrow().state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(placed).containsExactly("B7");
    }
}
