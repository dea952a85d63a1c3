package dev.stagger.benchmarks;

import dev.stagger.Backoff;
import dev.stagger.HedgePolicy;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryScope;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * A hedged call whose first attempt answers before the hedge delay (1 s): what hedging costs every
 * healthy call, next to a plain retry of the same operation and to a straightforward hand-written
 * hedge. Resilience4j's hedge ({@code resilience4j-hedge}) is not published on Maven Central, so
 * it cannot be the anchor here.
 *
 * <ul>
 *   <li>{@code hedgeAsync_*}: the operation returns an already-completed future;
 *       {@code retry} is {@code callAsync} without hedging, {@code stagger} with it,
 *       {@code handWritten} a {@code CompletableFuture} and a {@code ScheduledExecutorService}
 *       timer cancelled when the first attempt completes.</li>
 *   <li>{@code hedgeAsyncPending_*}: the same, but the operation returns a pending future that the
 *       benchmark completes once the call has returned its own: the hedge timer is armed and
 *       disarmed on every call (the common async case: an answer that is not at hand).</li>
 *   <li>{@code hedgeSync_*}: the operation returns at once; {@code retry} is {@code call} without
 *       hedging, {@code stagger} with it (the first attempt on the caller's thread, the hedge armed
 *       in the thread's slot of the hedge watch), {@code handWritten} an {@code ExecutorService.submit}
 *       and a {@code Future.get} with the delay as timeout.</li>
 *   <li>{@code hedgeSyncFramed_*}: {@code hedgeSync_retry} and {@code hedgeSync_stagger} in a
 *       process whose calls keep frames ({@link Framed}: a scope with a deadline opened once, in
 *       these benchmarks' own forks), as once any retry with a deadline has been called.</li>
 * </ul>
 * The hedged retry has no listener (a listener takes the general path, which makes an execution
 * per call); the tear-down fails the run if the operation ran more often than it was called, i.e.
 * if any hedge was sent.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:+AlwaysPreTouch"})
public class HedgeBenchmark {
    private static final Duration DELAY = Duration.ofSeconds(1);

    private Downstream downstream;
    private CompletableFuture<Object> done;
    private Retry plain;
    private Retry hedged;
    private ScheduledExecutorService timer;
    private ExecutorService pool;
    /**
     * Calls made through the retries (hedged and plain alike, so both pay for the counting), and
     * runs of their operation: equal unless a hedge was sent.
     */
    private long calls;
    private final AtomicLong runs = new AtomicLong();
    private Callable<Object> countedSync;
    private Supplier<CompletableFuture<Object>> countedDone;
    private CompletableFuture<Object> pending;
    private Supplier<CompletableFuture<Object>> countedPending;

    @Setup
    public void setUp() throws Exception {
        downstream = new Downstream();
        done = CompletableFuture.completedFuture(downstream.payload());
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build();
        plain = Retry.of("bench-plain", policy).withoutBudget();
        hedged = Retry.of("bench-hedged", policy.toBuilder().hedge(HedgePolicy.after(DELAY)).build()).withoutBudget();
        countedSync = () -> {
            runs.lazySet(runs.get() + 1); // one writer while no hedge runs: no atomic add needed
            return downstream.call();
        };
        countedDone = () -> {
            runs.lazySet(runs.get() + 1);
            return done;
        };
        countedPending = () -> {
            runs.lazySet(runs.get() + 1);
            return pending;
        };
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hand-written-hedge-timer");
            t.setDaemon(true);
            return t;
        });
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "hand-written-hedge");
            t.setDaemon(true);
            return t;
        });
        for (Object result : new Object[] {hedgeAsync_stagger(), hedgeAsyncPending_stagger(), hedgeSync_stagger(),
                hedgeAsync_handWritten(), hedgeAsyncPending_handWritten(), hedgeSync_handWritten()}) {
            if (result != downstream.payload()) {
                throw new IllegalStateException("a hedged call did not return the payload: " + result);
            }
        }
    }

    @TearDown
    public void tearDown() {
        timer.shutdownNow();
        pool.shutdownNow();
        if (runs.get() != calls) {
            throw new IllegalStateException((runs.get() - calls)
                    + " hedges sent: this is not the path being measured");
        }
    }

    @Benchmark
    public Object hedgeAsync_retry() {
        calls++;
        return plain.callAsync(countedDone).join();
    }

    @Benchmark
    public Object hedgeAsync_stagger() {
        calls++;
        return hedged.callAsync(countedDone).join();
    }

    /** What one would write by hand: first attempt, a timer for the hedge, the timer cancelled on completion. */
    @Benchmark
    public Object hedgeAsync_handWritten() {
        return handWritten(done);
    }

    @Benchmark
    public Object hedgeAsyncPending_retry() {
        pending = new CompletableFuture<>();
        calls++;
        CompletableFuture<Object> call = plain.callAsync(countedPending);
        pending.complete(downstream.payload());
        return call.join();
    }

    @Benchmark
    public Object hedgeAsyncPending_stagger() {
        pending = new CompletableFuture<>();
        calls++;
        CompletableFuture<Object> call = hedged.callAsync(countedPending);
        pending.complete(downstream.payload());
        return call.join();
    }

    @Benchmark
    public Object hedgeAsyncPending_handWritten() {
        pending = new CompletableFuture<>();
        CompletableFuture<Object> call = handWrittenStart(pending);
        pending.complete(downstream.payload());
        return call.join();
    }

    private Object handWritten(CompletableFuture<Object> first) {
        return handWrittenStart(first).join();
    }

    private CompletableFuture<Object> handWrittenStart(CompletableFuture<Object> first) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        ScheduledFuture<?> hedge = timer.schedule(() -> {
            if (!result.isDone()) {
                done.whenComplete((v, f) -> result.complete(v));
            }
        }, DELAY.toNanos(), TimeUnit.NANOSECONDS);
        first.whenComplete((v, f) -> {
            hedge.cancel(false);
            result.complete(v);
        });
        return result;
    }

    @Benchmark
    public Object hedgeSync_retry() throws Exception {
        calls++;
        return plain.call(countedSync);
    }

    @Benchmark
    public Object hedgeSync_stagger() throws Exception {
        calls++;
        return hedged.call(countedSync);
    }

    /**
     * Calls keep frames from now on (in this fork only: JMH runs each benchmark in its own), as
     * after the first call of a retry with a deadline or the first scope opened.
     */
    @State(Scope.Thread)
    public static class Framed {
        @Setup
        public void setUp() {
            RetryScope.open(Duration.ofSeconds(1)).close();
        }
    }

    @Benchmark
    public Object hedgeSyncFramed_retry(Framed framed) throws Exception {
        calls++;
        return plain.call(countedSync);
    }

    @Benchmark
    public Object hedgeSyncFramed_stagger(Framed framed) throws Exception {
        calls++;
        return hedged.call(countedSync);
    }

    /** By hand: the attempt on a pool, the caller waiting up to the delay before it would hedge. */
    @Benchmark
    public Object hedgeSync_handWritten() throws Exception {
        Future<Object> first = pool.submit((Callable<Object>) downstream);
        try {
            return first.get(DELAY.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException slow) {
            Future<Object> second = pool.submit((Callable<Object>) downstream);
            return second.get();
        }
    }
}
