package dev.stagger.benchmarks;

import dev.stagger.Backoff;
import dev.stagger.HedgePolicy;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
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
 *   <li>{@code hedgeSync_*}: the operation returns at once; {@code retry} is {@code call} without
 *       hedging (the attempt on the caller's thread), {@code stagger} with it (the attempt on the
 *       hedge executor, the caller waiting), {@code handWritten} an {@code ExecutorService.submit}
 *       and a {@code Future.get} with the delay as timeout.</li>
 * </ul>
 * The setup checks that no hedge is ever sent on this path.
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
    private int hedgesSent;

    @Setup
    public void setUp() throws Exception {
        downstream = new Downstream();
        done = CompletableFuture.completedFuture(downstream.payload());
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build();
        plain = Retry.of("bench-plain", policy).withoutBudget();
        hedged = Retry.of("bench-hedged", policy.toBuilder().hedge(HedgePolicy.after(DELAY)).build()).withoutBudget()
                .withListener(new dev.stagger.RetryListener() {
                    @Override
                    public void onHedgeSent(dev.stagger.RetryEvent.HedgeSent event) {
                        hedgesSent++;
                    }
                });
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
        for (Object result : new Object[] {hedgeAsync_stagger(), hedgeSync_stagger(), hedgeAsync_handWritten(),
                hedgeSync_handWritten()}) {
            if (result != downstream.payload()) {
                throw new IllegalStateException("a hedged call did not return the payload: " + result);
            }
        }
    }

    @TearDown
    public void tearDown() {
        timer.shutdownNow();
        pool.shutdownNow();
        if (hedgesSent != 0) {
            throw new IllegalStateException(hedgesSent + " hedges sent: this is not the path being measured");
        }
    }

    @Benchmark
    public Object hedgeAsync_retry() {
        return plain.callAsync(() -> done).join();
    }

    @Benchmark
    public Object hedgeAsync_stagger() {
        return hedged.callAsync(() -> done).join();
    }

    /** What one would write by hand: first attempt, a timer for the hedge, the timer cancelled on completion. */
    @Benchmark
    public Object hedgeAsync_handWritten() {
        CompletableFuture<Object> result = new CompletableFuture<>();
        CompletableFuture<Object> first = done;
        ScheduledFuture<?> hedge = timer.schedule(() -> {
            if (!result.isDone()) {
                done.whenComplete((v, f) -> result.complete(v));
            }
        }, DELAY.toNanos(), TimeUnit.NANOSECONDS);
        first.whenComplete((v, f) -> {
            hedge.cancel(false);
            result.complete(v);
        });
        return result.join();
    }

    @Benchmark
    public Object hedgeSync_retry() throws Exception {
        return plain.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object hedgeSync_stagger() throws Exception {
        return hedged.call((Callable<Object>) downstream);
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
