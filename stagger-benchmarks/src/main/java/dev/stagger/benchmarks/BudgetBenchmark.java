package dev.stagger.benchmarks;

import dev.stagger.RetryBudget;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a {@link RetryBudget} adds to each call: the deposit every successful attempt makes, and
 * the withdrawal every retry asks for. Stagger only (the other libraries have no retry budget).
 *
 * <p>Each state is built so that the path its name promises is the only one taken for the whole
 * run, and a tear-down check fails the run if it was not.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:+AlwaysPreTouch"})
public class BudgetBenchmark {

    /** The default budget, which starts full and stays full under success-only traffic. */
    @State(Scope.Benchmark)
    public static class FullBucket {
        final RetryBudget budget = RetryBudget.of("full");

        @TearDown
        public void checkStillFull() {
            if (budget.tokens() < budget.maxTokens()) {
                throw new IllegalStateException("the bucket was not full: " + budget);
            }
        }
    }

    /**
     * A bucket emptied before every iteration and too large to refill within one: each deposit
     * takes the compare-and-set path. The deposit is 0.001 tokens rather than the default 0.1 only
     * so that the bucket cannot fill up; the work per deposit is the same.
     */
    @State(Scope.Benchmark)
    public static class NonFullBucket {
        final RetryBudget budget = RetryBudget.builder("non-full").ratio(0.001).maxTokens(2_000_000).build();

        @Setup(Level.Iteration)
        public void empty() {
            while (budget.tokens() >= 1) {
                budget.tryAcquireRetry();
            }
        }

        @TearDown(Level.Iteration)
        public void checkNeverFilled() {
            if (budget.tokens() >= budget.maxTokens()) {
                throw new IllegalStateException("the bucket filled up during the iteration: " + budget);
            }
        }
    }

    /** So many tokens that withdrawals never exhaust them: every retry is paid from the bucket. */
    @State(Scope.Benchmark)
    public static class PlentyOfTokens {
        final RetryBudget budget = RetryBudget.builder("plenty").maxTokens(1e12).build();

        @TearDown
        public void checkNeverRanOut() {
            if (budget.tokens() < 1 || budget.refusals() > 0) {
                throw new IllegalStateException("the bucket ran out: " + budget);
            }
        }
    }

    /** An empty bucket: past the 10 retries per second of the floor, every retry is refused. */
    @State(Scope.Benchmark)
    public static class EmptyBucket {
        final RetryBudget budget = RetryBudget.builder("empty").maxTokens(1).build();

        @Setup
        public void empty() {
            while (budget.tokens() >= 1) {
                budget.tryAcquireRetry();
            }
        }
    }

    @Benchmark
    public void onSuccess_fullBucket(FullBucket state) {
        state.budget.onSuccess();
    }

    @Benchmark
    public void onSuccess_nonFullBucket(NonFullBucket state) {
        state.budget.onSuccess();
    }

    @Benchmark
    public boolean tryAcquireRetry_tokenAvailable(PlentyOfTokens state) {
        return state.budget.tryAcquireRetry();
    }

    @Benchmark
    public boolean tryAcquireRetry_refused(EmptyBucket state) {
        return state.budget.tryAcquireRetry();
    }
}
