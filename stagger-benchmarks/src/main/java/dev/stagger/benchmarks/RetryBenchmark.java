package dev.stagger.benchmarks;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.stagger.Backoff;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryScope;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.internal.RetryImpl;
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
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.core.retry.RetryException;
import org.springframework.retry.backoff.NoBackOffPolicy;
import org.springframework.retry.policy.SimpleRetryPolicy;
import org.springframework.retry.support.RetryTemplate;

/**
 * The cost of wrapping a call in a retry, per library, in two scenarios.
 *
 * <ul>
 *   <li>{@code happyPath_*}: the first attempt succeeds — what every healthy call pays.</li>
 *   <li>{@code oneFailure_*}: the first attempt throws, the second succeeds, with zero delay
 *       between them — the bookkeeping of one retry, without any real waiting.</li>
 * </ul>
 *
 * Every library runs the same {@link Downstream} body, is configured for 3 attempts with no wait,
 * and is built once (wrappers are decorated in setup, as an application would). Method names are
 * {@code scenario_library}; {@code run.sh} groups its table by the scenario.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:+AlwaysPreTouch"})
public class RetryBenchmark {
    private static final int MAX_ATTEMPTS = 3;

    private Downstream downstream;
    private Retry stagger;
    private Retry staggerFallback;
    private Retry staggerRetrying;
    private Callable<Object> resilience4j;
    private FailsafeExecutor<Object> failsafe;
    private RetryTemplate spring;
    private org.springframework.core.retry.RetryTemplate spring7;

    @Setup
    public void setUp() {
        downstream = new Downstream();

        // No listener, breaker or deadline: the configuration the 0 B/op target is about. It has
        // the default budget Retry.of gives every retry (a full bucket: one volatile read per success).
        stagger = Retry.of("bench", RetryPolicy.builder().maxAttempts(MAX_ATTEMPTS).backoff(Backoff.none()).build());
        // The same with a fallback: a first attempt that succeeds must cost exactly what it costs without one.
        staggerFallback = stagger.withFallback(dev.stagger.Fallback.of(context -> "fallback"));
        // oneFailure retries every call, which the default budget (rightly) refuses once its tokens
        // and floor run out; the anchors have no budget, so this one has none either
        staggerRetrying = stagger.withoutBudget();

        // Resilience4j sleeps even for a zero interval (Thread.sleep(0) costs over a microsecond on
        // a VM), so its sleep is replaced by a no-op; the setting is static but this fork runs no
        // other Resilience4j retry that waits.
        RetryImpl.setSleepFunction(millis -> { });
        io.github.resilience4j.retry.Retry r4j = io.github.resilience4j.retry.Retry.of("bench",
                RetryConfig.custom().maxAttempts(MAX_ATTEMPTS).waitDuration(Duration.ZERO).build());
        resilience4j = io.github.resilience4j.retry.Retry.decorateCallable(r4j, downstream);

        // Failsafe's default delay is zero.
        failsafe = Failsafe.with(dev.failsafe.RetryPolicy.builder().withMaxAttempts(MAX_ATTEMPTS).build());

        spring = new RetryTemplate();
        spring.setRetryPolicy(new SimpleRetryPolicy(MAX_ATTEMPTS));
        spring.setBackOffPolicy(new NoBackOffPolicy());

        // Spring Framework 7's own retry (the engine behind its @Retryable): total attempts =
        // 1 + maxRetries. It has no hook to replace its sleep, so a zero delay still costs it a
        // Thread.sleep(0); that is what its users pay.
        spring7 = new org.springframework.core.retry.RetryTemplate(org.springframework.core.retry.RetryPolicy.builder()
                .maxRetries(MAX_ATTEMPTS - 1).delay(Duration.ZERO).build());

        checkEveryLibraryRecoversFromOneFailure();
    }

    /** Fails the run, rather than measuring nonsense, if a wrapper is configured not to retry. */
    private void checkEveryLibraryRecoversFromOneFailure() {
        Object[] results = {oneFailure_direct(), unchecked(this::oneFailure_stagger),
                unchecked(this::oneFailure_resilience4j), oneFailure_failsafe(), oneFailure_springRetry(),
                unchecked(this::oneFailure_spring7)};
        for (Object result : results) {
            if (result != downstream.payload()) {
                throw new IllegalStateException("a wrapper did not recover from one failure: " + result);
            }
        }
    }

    private static Object unchecked(Callable<Object> call) {
        try {
            return call.call();
        } catch (Exception e) {
            throw new IllegalStateException("a wrapper did not recover from one failure", e);
        }
    }

    // ---- first attempt succeeds ----

    @Benchmark
    public Object happyPath_direct() {
        return downstream.call();
    }

    @Benchmark
    public Object happyPath_stagger() throws Exception {
        return stagger.call((Callable<Object>) downstream);
    }

    /** The same retry without its default budget ({@code withoutBudget()}). */
    @State(Scope.Thread)
    public static class WithoutBudget {
        Retry retry;

        @Setup
        public void setUp() {
            retry = Retry.of("bench-no-budget", RetryPolicy.builder().maxAttempts(MAX_ATTEMPTS).backoff(Backoff.none())
                    .build()).withoutBudget();
        }
    }

    @Benchmark
    public Object happyPath_staggerWithoutBudget(WithoutBudget state) throws Exception {
        return state.retry.call((Callable<Object>) downstream);
    }

    /**
     * The default retry in a process that keeps frames for nesting: once a retry with a deadline
     * has been called or a {@code RetryScope} opened (here in this benchmark's own fork), every call
     * enters and leaves a frame on its thread's stack.
     */
    @State(Scope.Thread)
    public static class Framed {
        Retry retry;

        @Setup
        public void setUp() {
            RetryScope.open(Duration.ofSeconds(1)).close(); // a scope with a deadline: frames from now on
            retry = Retry.of("bench-framed", RetryPolicy.builder().maxAttempts(MAX_ATTEMPTS).backoff(Backoff.none()).build());
        }
    }

    @Benchmark
    public Object happyPath_staggerFramed(Framed state) throws Exception {
        return state.retry.call((Callable<Object>) downstream);
    }

    /**
     * With a whole-call deadline: the call's start is read from the coarse clock (a volatile read),
     * not the OS clock, so the happy path allocates nothing. Its own state, checked in its own fork:
     * calling a retry with a deadline makes every later call in the process keep a frame for
     * nesting, which the other benchmarks' forks do not do (happyPath_staggerFramed measures that).
     */
    @State(Scope.Thread)
    public static class WithDeadline {
        Retry retry;

        @Setup
        public void setUp(RetryBenchmark bench) {
            retry = Retry.of("bench-deadline", RetryPolicy.builder().maxAttempts(MAX_ATTEMPTS)
                    .backoff(Backoff.none()).deadline(Duration.ofSeconds(10)).build());
            bench.downstream.failOnce();
            if (unchecked(() -> retry.call((Callable<Object>) bench.downstream)) != bench.downstream.payload()) {
                throw new IllegalStateException("the deadline retry did not recover from one failure");
            }
        }
    }

    /** With {@code deadline(10 s)}: no OS clock read, nothing allocated. */
    @Benchmark
    public Object happyPath_staggerDeadline(WithDeadline state) throws Exception {
        return state.retry.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object happyPath_staggerFallback() throws Exception {
        return staggerFallback.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object happyPath_resilience4j() throws Exception {
        return resilience4j.call();
    }

    @Benchmark
    public Object happyPath_failsafe() {
        return failsafe.get((dev.failsafe.function.CheckedSupplier<Object>) downstream);
    }

    @Benchmark
    public Object happyPath_springRetry() {
        return spring.execute(downstream);
    }

    @Benchmark
    public Object happyPath_spring7() throws RetryException {
        return spring7.execute(downstream);
    }

    // ---- one failure, then success, zero delay ----

    /** The same two calls written by hand: one try/catch, no library. */
    @Benchmark
    public Object oneFailure_direct() {
        downstream.failOnce();
        try {
            return downstream.call();
        } catch (Downstream.TransientFailure first) {
            return downstream.call();
        }
    }

    @Benchmark
    public Object oneFailure_stagger() throws Exception {
        downstream.failOnce();
        return staggerRetrying.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object oneFailure_resilience4j() throws Exception {
        downstream.failOnce();
        return resilience4j.call();
    }

    @Benchmark
    public Object oneFailure_failsafe() {
        downstream.failOnce();
        return failsafe.get((dev.failsafe.function.CheckedSupplier<Object>) downstream);
    }

    @Benchmark
    public Object oneFailure_springRetry() {
        downstream.failOnce();
        return spring.execute(downstream);
    }

    @Benchmark
    public Object oneFailure_spring7() throws RetryException {
        downstream.failOnce();
        return spring7.execute(downstream);
    }
}
