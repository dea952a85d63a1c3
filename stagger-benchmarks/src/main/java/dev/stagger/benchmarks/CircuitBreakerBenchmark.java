package dev.stagger.benchmarks;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.failsafe.function.CheckedSupplier;
import dev.stagger.AdaptiveThrottle;
import dev.stagger.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
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
 * The cost of a call through a closed circuit breaker — what every healthy call pays — at one
 * thread and at two threads sharing one breaker (where recording contends).
 *
 * <p>The breakers are configured alike where the libraries allow it: failure rate 50 %, at least
 * 20 calls, over a 30 s time window (Stagger's defaults); Resilience4j also with its count-based
 * window of the last 100 calls, its default type. Each library's own defaults otherwise
 * (Resilience4j's default window synchronization, Stagger's default 10 buckets). Method names are
 * {@code scenario_library}.
 *
 * <p>Stagger's rate mode decides every trip on one word per bucket changed by compare-and-set;
 * once two threads contend on it, successes that cannot trip the breaker count in per-thread cells
 * beside it instead, so the two-thread rows measure that path. {@code stagger_consecutive} is the
 * simple mode (five failures in a row), whose success path only reads that word.
 *
 * <p>{@code staggerThrottle} is the other guard a healthy call pays for, measured beside the
 * breakers: an {@link AdaptiveThrottle} with its defaults (K = 2, a 2-minute window in 20 buckets)
 * asked before the call and told of its acceptance after it, as a {@code Retry} does. With every
 * call accepted it never refuses and never draws a random number: what is left is the reading of
 * its 20 bucket words and one compare-and-set on the current one.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:+AlwaysPreTouch"})
public class CircuitBreakerBenchmark {
    private static final int FAILURE_RATE_PERCENT = 50;
    private static final int MINIMUM_CALLS = 20;
    private static final Duration WINDOW = Duration.ofSeconds(30);
    private static final int COUNT_WINDOW = 100;

    private Downstream downstream;
    private CircuitBreaker stagger;
    private CircuitBreaker staggerConsecutive;
    private io.github.resilience4j.circuitbreaker.CircuitBreaker r4jCount;
    private io.github.resilience4j.circuitbreaker.CircuitBreaker r4jTime;
    private Callable<Object> resilience4jCount;
    private Callable<Object> resilience4jTime;
    private dev.failsafe.CircuitBreaker<Object> failsafeBreaker;
    private FailsafeExecutor<Object> failsafe;
    private AdaptiveThrottle throttle;

    @Setup
    public void setUp() {
        downstream = new Downstream();

        stagger = CircuitBreaker.of("bench"); // defaults: 50 %, 20 calls, 30 s window in 10 buckets
        staggerConsecutive = CircuitBreaker.builder("bench-consecutive").consecutiveFailures(5).build();

        r4jCount = io.github.resilience4j.circuitbreaker.CircuitBreaker.of("count", CircuitBreakerConfig.custom()
                .failureRateThreshold(FAILURE_RATE_PERCENT)
                .slidingWindow(COUNT_WINDOW, MINIMUM_CALLS, SlidingWindowType.COUNT_BASED)
                .build());
        r4jTime = io.github.resilience4j.circuitbreaker.CircuitBreaker.of("time", CircuitBreakerConfig.custom()
                .failureRateThreshold(FAILURE_RATE_PERCENT)
                .slidingWindow((int) WINDOW.toSeconds(), MINIMUM_CALLS, SlidingWindowType.TIME_BASED)
                .build());
        resilience4jCount = io.github.resilience4j.circuitbreaker.CircuitBreaker.decorateCallable(r4jCount, downstream);
        resilience4jTime = io.github.resilience4j.circuitbreaker.CircuitBreaker.decorateCallable(r4jTime, downstream);

        failsafeBreaker = dev.failsafe.CircuitBreaker.builder()
                .withFailureRateThreshold(FAILURE_RATE_PERCENT, MINIMUM_CALLS, WINDOW)
                .build();
        failsafe = Failsafe.with(failsafeBreaker);
        throttle = AdaptiveThrottle.of("bench");
    }

    /** A call through the throttle, as a {@code Retry} makes it: ask, call, record the acceptance. */
    private Object throughThrottle() {
        if (!throttle.tryAcquire()) {
            throw new IllegalStateException("the throttle refused a call to a backend that accepts everything");
        }
        Object result = downstream.call();
        throttle.onAccepted();
        return result;
    }

    /** Every call succeeded, so a breaker that is not closed now was measured on the wrong path. */
    @TearDown
    public void checkEveryBreakerStayedClosed() {
        if (stagger.state() != CircuitBreaker.State.CLOSED
                || staggerConsecutive.state() != CircuitBreaker.State.CLOSED
                || r4jCount.getState() != io.github.resilience4j.circuitbreaker.CircuitBreaker.State.CLOSED
                || r4jTime.getState() != io.github.resilience4j.circuitbreaker.CircuitBreaker.State.CLOSED
                || !failsafeBreaker.isClosed() || throttle.rejections() > 0) {
            throw new IllegalStateException("a breaker left the closed state during a success-only benchmark");
        }
    }

    // ---- one thread ----

    @Benchmark
    public Object closedOneThread_direct() {
        return downstream.call();
    }

    @Benchmark
    public Object closedOneThread_stagger() throws Exception {
        return stagger.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object closedOneThread_staggerConsecutive() throws Exception {
        return staggerConsecutive.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object closedOneThread_staggerThrottle() {
        return throughThrottle();
    }

    @Benchmark
    public Object closedOneThread_resilience4jCount() throws Exception {
        return resilience4jCount.call();
    }

    @Benchmark
    public Object closedOneThread_resilience4jTime() throws Exception {
        return resilience4jTime.call();
    }

    @Benchmark
    public Object closedOneThread_failsafe() {
        return failsafe.get((CheckedSupplier<Object>) downstream);
    }

    // ---- two threads, one shared breaker ----

    @Benchmark
    @Threads(2)
    public Object closedTwoThreads_direct() {
        return downstream.call();
    }

    @Benchmark
    @Threads(2)
    public Object closedTwoThreads_stagger() throws Exception {
        return stagger.call((Callable<Object>) downstream);
    }

    @Benchmark
    @Threads(2)
    public Object closedTwoThreads_staggerConsecutive() throws Exception {
        return staggerConsecutive.call((Callable<Object>) downstream);
    }

    @Benchmark
    @Threads(2)
    public Object closedTwoThreads_staggerThrottle() {
        return throughThrottle();
    }

    @Benchmark
    @Threads(2)
    public Object closedTwoThreads_resilience4jCount() throws Exception {
        return resilience4jCount.call();
    }

    @Benchmark
    @Threads(2)
    public Object closedTwoThreads_resilience4jTime() throws Exception {
        return resilience4jTime.call();
    }

    @Benchmark
    @Threads(2)
    public Object closedTwoThreads_failsafe() {
        return failsafe.get((CheckedSupplier<Object>) downstream);
    }
}
