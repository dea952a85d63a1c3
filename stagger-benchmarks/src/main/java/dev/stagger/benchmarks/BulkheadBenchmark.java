package dev.stagger.benchmarks;

import dev.stagger.Bulkhead;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a bulkhead adds to a call that finds a free permit, at one thread and at two threads
 * sharing one bulkhead: Stagger's {@link Bulkhead} on a {@link Retry} (a permit taken before the
 * attempt and given back after it) beside Resilience4j's {@code SemaphoreBulkhead} around the same
 * call, with the call alone and the retry without a bulkhead as anchors. The limit (100) is never
 * reached, and neither bulkhead waits: both refuse at once when full (Resilience4j's
 * {@code maxWaitDuration} 0). Method names are {@code scenario_library}.
 *
 * <p>A retry with a bulkhead keeps {@code Retry}'s inline path (no execution object for a call
 * whose first attempt succeeds): the fixed row is one compare-and-set to take the permit and a
 * decrement to give it back; the {@code adaptive} row adds the adaptive limit's two clock reads,
 * its permit object and its sample.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:+AlwaysPreTouch"})
public class BulkheadBenchmark {
    private static final int LIMIT = 100;

    private Downstream downstream;
    private Retry plain;
    private Retry fixed;
    private Retry adaptive;
    private Bulkhead staggerFixed;
    private Bulkhead staggerAdaptive;
    private io.github.resilience4j.bulkhead.Bulkhead r4j;
    private Callable<Object> resilience4j;

    @Setup
    public void setUp() {
        downstream = new Downstream();
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).build();
        plain = Retry.of("bench", policy);
        staggerFixed = Bulkhead.of("fixed", LIMIT);
        staggerAdaptive = Bulkhead.builder("adaptive").maxConcurrent(LIMIT).adaptive(Duration.ofSeconds(1)).build();
        fixed = plain.withBulkhead(staggerFixed);
        adaptive = plain.withBulkhead(staggerAdaptive);
        r4j = io.github.resilience4j.bulkhead.Bulkhead.of("bench", BulkheadConfig.custom()
                .maxConcurrentCalls(LIMIT).maxWaitDuration(Duration.ZERO).build());
        resilience4j = io.github.resilience4j.bulkhead.Bulkhead.decorateCallable(r4j, downstream);
    }

    /** No call was refused, so every row measured the free-permit path. */
    @TearDown
    public void checkNothingWasRefused() {
        if (staggerFixed.refusals() > 0 || staggerAdaptive.refusals() > 0 || staggerAdaptive.limit() != LIMIT
                || r4j.getMetrics().getAvailableConcurrentCalls() != LIMIT) {
            throw new IllegalStateException("a bulkhead refused or kept a permit during a free-permit benchmark");
        }
    }

    @Benchmark
    public Object oneThread_direct() throws Exception {
        return downstream.call();
    }

    @Benchmark
    public Object oneThread_staggerRetry() throws Exception {
        return plain.call(downstream);
    }

    @Benchmark
    public Object oneThread_staggerBulkhead() throws Exception {
        return fixed.call(downstream);
    }

    @Benchmark
    public Object oneThread_staggerAdaptive() throws Exception {
        return adaptive.call(downstream);
    }

    @Benchmark
    public Object oneThread_resilience4j() throws Exception {
        return resilience4j.call();
    }

    @Benchmark
    @Threads(2)
    public Object twoThreads_direct() throws Exception {
        return downstream.call();
    }

    @Benchmark
    @Threads(2)
    public Object twoThreads_staggerBulkhead() throws Exception {
        return fixed.call(downstream);
    }

    @Benchmark
    @Threads(2)
    public Object twoThreads_resilience4j() throws Exception {
        return resilience4j.call();
    }
}
