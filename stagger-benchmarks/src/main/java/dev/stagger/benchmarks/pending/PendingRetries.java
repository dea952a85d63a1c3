package dev.stagger.benchmarks.pending;

import dev.stagger.benchmarks.harness.CpuProbe;
import dev.stagger.benchmarks.harness.HeapProbe;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * How much heap an async call costs while it waits for its retry, and how long it takes to get
 * it there, for one library in this JVM. {@code pending-retries.sh} runs it once per library and
 * size, each in a fresh JVM, and prints the results side by side.
 *
 * <p>Each call's first attempt returns an already-failed future (a new one per attempt, failing
 * with one shared stackless exception), so the library schedules a retry after {@code --wait}
 * (10 minutes: nothing fires while the harness runs). The caller keeps every returned future, as
 * a caller that may cancel must.
 *
 * <ol>
 *   <li>Warm-up: rounds of pending calls, each cancelled, so the paths are compiled.</li>
 *   <li>Baseline: heap in use after {@link HeapProbe#settledUsedBytes() a settled GC}.</li>
 *   <li>Schedule: {@code N} calls started in a loop; timed from the first start until the
 *       operation has run {@code N} times (Failsafe runs first attempts on a pool, so the loop
 *       returning is not enough), divided by {@code N}: <b>ns per pending call</b>, first attempt
 *       and wait scheduling included; and the process's CPU time over the same span, divided by
 *       {@code N} (every thread, GC included: a cross-check less disturbed by other load).</li>
 *   <li>Held: heap after a settled GC minus the baseline, divided by {@code N}: <b>bytes per
 *       pending call</b>, the returned future and everything the library keeps for the wait
 *       (the slot in the caller's array was allocated before the baseline and is not counted).</li>
 *   <li>Cancel: every future cancelled and dropped by the caller; heap after a settled GC minus
 *       the baseline, divided by {@code N}: <b>bytes still held per cancelled call</b> (0 when
 *       cancelling frees the wait at once; a library whose timer keeps cancelled waits until
 *       they are due holds them here).</li>
 * </ol>
 *
 * <p>Output: one JSON object on standard output; progress on standard error.
 *
 * <pre>
 * java -Xms4g -Xmx4g -XX:+UseG1GC -XX:+AlwaysPreTouch -cp benchmarks.jar \
 *     dev.stagger.benchmarks.pending.PendingRetries --library stagger --calls 1000000
 * </pre>
 */
public final class PendingRetries {
    private static final RuntimeException FAILURE = new RuntimeException("first attempt fails", null, false, false) {
        private static final long serialVersionUID = 1L;
    };

    private PendingRetries() {
    }

    public static void main(String[] args) throws Exception {
        String library = null;
        int calls = 100_000;
        Duration wait = Duration.ofMinutes(10);
        boolean histogram = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--library": library = args[++i]; break;
                case "--calls": calls = Integer.parseInt(args[++i]); break;
                case "--wait": wait = Duration.parse(args[++i]); break;
                case "--histogram": histogram = true; break;
                default: throw new IllegalArgumentException("unknown argument: " + args[i]
                        + " (expected --library NAME --calls N [--wait PT10M] [--histogram])");
            }
        }
        if (library == null) {
            throw new IllegalArgumentException("--library is required: stagger, resilience4j or failsafe");
        }
        if (calls < 1) {
            throw new IllegalArgumentException("calls must be at least 1, got " + calls);
        }
        PendingLibrary lib = PendingLibrary.named(library, wait);
        try {
            System.out.println(measure(lib, calls, histogram));
        } finally {
            lib.close();
        }
        System.exit(0); // the libraries' timer threads are not all daemons
    }

    private static String measure(PendingLibrary lib, int calls, boolean histogram) throws InterruptedException {
        AtomicLong attempts = new AtomicLong();
        Supplier<CompletionStage<Object>> operation = () -> {
            attempts.incrementAndGet();
            return CompletableFuture.failedFuture(FAILURE);
        };
        CompletableFuture<?>[] futures = new CompletableFuture<?>[calls];

        int warmRound = Math.min(calls, 20_000);
        for (int round = 0; round < 10; round++) {
            long before = attempts.get();
            for (int i = 0; i < warmRound; i++) {
                futures[i] = lib.start(operation);
            }
            awaitAttempts(attempts, before + warmRound);
            for (int i = 0; i < warmRound; i++) {
                futures[i].cancel(false);
                futures[i] = null;
            }
        }
        lib.resetAfterWarmUp();
        attempts.set(0);

        HeapProbe.Histogram before = histogram ? HeapProbe.histogram() : null;
        long baseline = HeapProbe.settledUsedBytes();
        log(lib.name() + ": baseline " + baseline / 1024 + " KiB; starting " + calls + " calls");

        long cpu0 = CpuProbe.processNanos(); // every thread: the caller, the library's timer and pool threads, the GC
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            futures[i] = lib.start(operation);
        }
        awaitAttempts(attempts, calls);
        long scheduleNanos = System.nanoTime() - t0;
        long scheduleCpuNanos = CpuProbe.processNanos() - cpu0;
        TimeUnit.MILLISECONDS.sleep(200); // let a pool finish scheduling what it had in hand
        long pendingNotDone = 0;
        for (CompletableFuture<?> f : futures) {
            if (!f.isDone()) {
                pendingNotDone++;
            }
        }
        long held = HeapProbe.settledUsedBytes() - baseline;
        String classes = histogram ? HeapProbe.histogram().minus(before).topPerCall(calls, 8) : "[]";
        log(lib.name() + ": " + pendingNotDone + " pending; " + held / calls + " B each; "
                + scheduleNanos / calls + " ns each");

        long c0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            futures[i].cancel(false);
        }
        long cancelNanos = System.nanoTime() - c0;
        long attemptsAfterCancel = attempts.get();
        java.util.Arrays.fill(futures, null);
        long afterCancel = HeapProbe.settledUsedBytes() - baseline;
        log(lib.name() + ": after cancel " + afterCancel / calls + " B each still held");

        return String.format(Locale.ROOT,
                "{\"library\":\"%s\",\"calls\":%d,\"pending\":%d,\"attempts\":%d,"
                        + "\"heldBytesPerCall\":%.1f,\"scheduleNanosPerCall\":%.1f,\"scheduleCpuNanosPerCall\":%.1f,"
                        + "\"cancelNanosPerCall\":%.1f,"
                        + "\"heldBytesPerCallAfterCancel\":%.1f,\"classes\":%s}",
                lib.name(), calls, pendingNotDone, attemptsAfterCancel, (double) held / calls,
                (double) scheduleNanos / calls, (double) scheduleCpuNanos / calls, (double) cancelNanos / calls, (double) afterCancel / calls, classes);
    }

    private static void awaitAttempts(AtomicLong attempts, long target) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (attempts.get() < target) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + attempts.get() + " of " + target + " first attempts ran");
            }
            LockSupport.parkNanos(50_000);
        }
    }

    private static void log(String line) {
        System.err.println(line);
    }
}
