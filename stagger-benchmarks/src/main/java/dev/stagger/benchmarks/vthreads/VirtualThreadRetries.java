package dev.stagger.benchmarks.vthreads;

import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryRefusedException;
import dev.stagger.benchmarks.harness.HeapProbe;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Many concurrent synchronous {@link Retry#call(Callable)}s, each failing twice and waiting for
 * real ({@code Thread.sleep} through {@code Clock.system()}) before its third attempt succeeds: on
 * one virtual thread per call, the same with one {@link CircuitBreaker} and one
 * {@link RetryBudget} shared by every call, and on a bounded pool of platform threads as the
 * baseline. Needs JDK 21 or later (the module compiles for 17; virtual threads are reached by
 * reflection). {@code virtual-threads.sh} runs it with JDK 25.
 *
 * <p>Per variant it reports: wall time from releasing the calls to the last one ending; peak
 * carrier threads of the virtual-thread scheduler and peak live platform threads (sampled every
 * 5 ms); heap after one full GC taken once every call has made its first attempt, minus the
 * settled heap before the variant, per call then in flight; the process's resident memory at
 * the same moment minus before (virtual-thread stacks live in the heap, platform-thread stacks
 * outside it); and the {@code jdk.VirtualThreadPinned} events a JFR recording (threshold 0, with
 * stack traces) saw during the variant, with the frames where they happened.
 *
 * <p>Virtual-thread calls start together: every thread is started and parked on a gate first,
 * then the gate opens, so all calls are in flight at once. The wall time excludes the snapshot's
 * GC pause.
 *
 * <pre>
 * /usr/lib/jvm/temurin-25-jdk-amd64/bin/java -Xms2g -Xmx2g -XX:+UseG1GC -XX:+AlwaysPreTouch \
 *     -cp benchmarks.jar dev.stagger.benchmarks.vthreads.VirtualThreadRetries --calls 100000
 * </pre>
 *
 * <p>Output: a table on standard error and one JSON object per variant on standard output.
 */
public final class VirtualThreadRetries {
    private static final RuntimeException FAILURE = new RuntimeException("transient", null, false, false) {
        private static final long serialVersionUID = 1L;
    };
    private static final Object PAYLOAD = new Object();

    /** The root thread group: the virtual-thread scheduler's carriers are in a group of their own under it. */
    private static final ThreadGroup ROOT = rootGroup();

    private final int calls;
    private final int platformThreads;
    private final Duration firstWait;
    private final AtomicInteger firstAttempts = new AtomicInteger();

    private VirtualThreadRetries(int calls, int platformThreads, Duration firstWait) {
        this.calls = calls;
        this.platformThreads = platformThreads;
        this.firstWait = firstWait;
    }

    public static void main(String[] args) throws Exception {
        int calls = 100_000;
        int platformThreads = 200;
        Duration firstWait = Duration.ofMillis(10);
        Path jfr = Paths.get("target", "virtual-threads.jfr");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--calls": calls = Integer.parseInt(args[++i]); break;
                case "--platform-threads": platformThreads = Integer.parseInt(args[++i]); break;
                case "--first-wait": firstWait = Duration.parse(args[++i]); break;
                case "--jfr": jfr = Paths.get(args[++i]); break;
                default: throw new IllegalArgumentException("unknown argument: " + args[i] + " (expected --calls N"
                        + " [--platform-threads N] [--first-wait PT0.01S] [--jfr FILE])");
            }
        }
        if (!ThreadKinds.virtualThreadsAvailable()) {
            System.err.println("virtual threads need JDK 21 or later; this is " + Runtime.version()
                    + ". Run with /usr/lib/jvm/temurin-25-jdk-amd64/bin/java (see virtual-threads.sh).");
            System.exit(2);
        }
        if (calls < 1) {
            throw new IllegalArgumentException("calls must be at least 1, got " + calls);
        }
        if (platformThreads < 1) {
            throw new IllegalArgumentException("platform-threads must be at least 1, got " + platformThreads);
        }
        new VirtualThreadRetries(calls, platformThreads, firstWait).runAll(jfr);
        System.exit(0);
    }

    private void runAll(Path jfrFile) throws Exception {
        Recording recording = new Recording();
        recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
        recording.enable("jdk.VirtualThreadSubmitFailed").withStackTrace();
        recording.start();

        Instant controlStart = Instant.now();
        Thread control = ThreadKinds.virtualThreadFactory("control-").newThread(PinningControl::touch);
        control.start();
        control.join();
        Instant controlEnd = Instant.now();

        // Enough rounds for the retry path to be compiled: a thread parked in an interpreted
        // frame keeps a larger stack in the heap, which would inflate the first variant's figure.
        log("warm-up: 3 rounds of " + Math.min(calls, 20_000) + " calls per virtual-thread variant, "
                + Math.min(calls, 5_000) + " on the platform pool");
        for (int round = 0; round < 3; round++) {
            for (Variant v : Variant.values()) {
                run(v, Math.min(calls, v == Variant.PLATFORM ? 5_000 : 20_000));
            }
        }
        List<Result> results = new ArrayList<>();
        for (Variant v : Variant.values()) {
            results.add(run(v, calls));
        }

        recording.stop();
        if (jfrFile.getParent() != null) {
            Files.createDirectories(jfrFile.getParent());
        }
        recording.dump(jfrFile);
        recording.close();
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfrFile);
        for (Result r : results) {
            r.countEvents(events);
        }
        long controlPinned = events.stream().filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned")
                && !e.getStartTime().isBefore(controlStart) && !e.getStartTime().isAfter(controlEnd)).count();

        log(String.format(Locale.ROOT, "%n%,d calls, 3 attempts each, waits %d + %d ms; JDK %s; %d cores; JFR: %s",
                calls, firstWait.toMillis(), firstWait.toMillis() * 2, Runtime.version(),
                Runtime.getRuntime().availableProcessors(), jfrFile));
        log(String.format(Locale.ROOT, "  %-24s %8s %8s %8s %8s %9s %9s %11s %8s %7s %s", "variant", "wall ms",
                "calls/s", "carriers", "threads", "in flight", "heap MiB", "heap B/call", "RSS MiB", "pinned", "outcomes"));
        for (Result r : results) {
            log(r.line());
            System.out.println(r.json());
        }
        log("  control: a virtual thread that sleeps inside a class initializer (which pins it) produced "
                + controlPinned + " jdk.VirtualThreadPinned event(s)" + (controlPinned > 0 ? ": the recording sees pinning"
                : ": NONE, so a 0 above proves nothing"));
        System.out.println("{\"variant\":\"control\",\"pinnedEvents\":" + controlPinned + "}");
        for (Result r : results) {
            r.pinnedFrames.forEach((frames, n) -> log("  pinned in " + r.variant.label + " (" + n + "x): " + frames));
        }
    }

    private enum Variant {
        VIRTUAL("virtual"),
        VIRTUAL_GUARDED("virtual+breaker+budget"),
        PLATFORM("platform pool");

        final String label;

        Variant(String label) {
            this.label = label;
        }
    }

    private Retry retryFor(Variant v, int n) {
        // Waits firstWait, then 2 x firstWait; no jitter, so every run waits the same.
        Retry retry = Retry.of("vthreads", RetryPolicy.builder().maxAttempts(3)
                .backoff(Backoff.exponential(firstWait).multiplier(2)).build())
                .withoutBudget(); // every call retries: the guarded variant sets a budget that holds a token for each
        if (v == Variant.VIRTUAL_GUARDED) {
            // Every attempt is recorded by the breaker and every retry withdraws from the budget, but
            // neither refuses: the breaker's minimum is never reached (all first attempts fail at
            // once, which would trip any rate), and the budget holds a token for every retry.
            retry = retry.withCircuitBreaker(CircuitBreaker.builder("vthreads").minimumCalls(3 * n + 1).build())
                    .withBudget(RetryBudget.builder("vthreads").maxTokens(2.0 * n + 100).build());
        }
        return retry;
    }

    private Result run(Variant v, int n) throws Exception {
        Retry retry = retryFor(v, n);
        Result r = new Result(v, n);
        firstAttempts.set(0);
        long baselineHeap = HeapProbe.settledUsedBytes();
        long baselineRss = residentBytes();
        CountDownLatch done = new CountDownLatch(n);
        Sampler sampler = new Sampler(v == Variant.PLATFORM ? Math.min(n, platformThreads) : n, n, done);
        Runnable task = () -> {
            try {
                retry.call(new FlakyOperation(firstAttempts));
                r.succeeded.incrementAndGet();
            } catch (RetryRefusedException e) {
                r.refused.incrementAndGet();
            } catch (Exception e) {
                r.failed.incrementAndGet();
            } finally {
                done.countDown();
            }
        };
        ManagementFactory.getThreadMXBean().resetPeakThreadCount();
        long t0;
        r.start = Instant.now();
        if (v == Variant.PLATFORM) {
            ExecutorService pool = Executors.newFixedThreadPool(platformThreads);
            sampler.start();
            t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                pool.execute(task);
            }
            done.await();
            r.wallNanos = System.nanoTime() - t0;
            pool.shutdown();
        } else {
            CountDownLatch gate = new CountDownLatch(1);
            ThreadFactory factory = ThreadKinds.virtualThreadFactory("call-");
            Runnable gated = () -> {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                task.run();
            };
            for (int i = 0; i < n; i++) {
                factory.newThread(gated).start();
            }
            sampler.start();
            t0 = System.nanoTime();
            gate.countDown();
            done.await();
            r.wallNanos = System.nanoTime() - t0;
        }
        r.end = Instant.now();
        sampler.stop();
        r.wallNanos -= sampler.snapshotPauseNanos;
        r.peakCarriers = sampler.peakCarriers;
        r.peakThreads = ManagementFactory.getThreadMXBean().getPeakThreadCount();
        r.inFlightAtSnapshot = sampler.inFlightAtSnapshot;
        if (r.snapshotTaken()) {
            r.heapAtSnapshot = sampler.heapAtSnapshot - baselineHeap;
            r.rssAtSnapshot = sampler.rssAtSnapshot - baselineRss;
        }
        return r;
    }

    /**
     * The negative control: a virtual thread that blocks inside a class initializer stays pinned
     * to its carrier (still so on JDK 25), so the recording must report it.
     */
    private static final class PinningControl {
        static {
            try {
                TimeUnit.MILLISECONDS.sleep(30);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        static void touch() {
            // loading this class runs the static initializer above on the calling thread
        }
    }

    /** Fails its first two attempts, then returns; counts first attempts for the heap snapshot. */
    private static final class FlakyOperation implements Callable<Object> {
        private final AtomicInteger firstAttempts;
        private int attempts;

        FlakyOperation(AtomicInteger firstAttempts) {
            this.firstAttempts = firstAttempts;
        }

        @Override
        public Object call() {
            if (++attempts == 1) {
                firstAttempts.incrementAndGet();
            }
            if (attempts <= 2) {
                throw FAILURE;
            }
            return PAYLOAD;
        }
    }

    /**
     * A platform thread that counts carrier threads every 5 ms and takes the heap snapshot once
     * {@code snapshotAfter} calls have made their first attempt.
     */
    private final class Sampler {
        private final int snapshotAfter;
        private final int calls;
        private final CountDownLatch done;
        private final Thread thread;
        private volatile boolean running = true;
        volatile int peakCarriers;
        volatile long snapshotPauseNanos;
        volatile long heapAtSnapshot;
        volatile long rssAtSnapshot;
        volatile long inFlightAtSnapshot = -1;

        Sampler(int snapshotAfter, int calls, CountDownLatch done) {
            this.snapshotAfter = snapshotAfter;
            this.calls = calls;
            this.done = done;
            this.thread = new Thread(this::loop, "sampler");
            this.thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join();
        }

        private void loop() {
            boolean snapped = false;
            while (running) {
                int carriers = 0;
                Thread[] threads = new Thread[ROOT.activeCount() + 64];
                int count = ROOT.enumerate(threads, true);
                for (int i = 0; i < count; i++) {
                    if (ThreadKinds.isCarrier(threads[i])) {
                        carriers++;
                    }
                }
                peakCarriers = Math.max(peakCarriers, carriers);
                if (!snapped && firstAttempts.get() >= snapshotAfter) {
                    snapped = true;
                    // counted just before the collection's pause: waits that expire during the pause
                    // would let many calls end before a count taken after it
                    long inFlight = firstAttempts.get() - (calls - done.getCount());
                    long p0 = System.nanoTime();
                    System.gc();
                    heapAtSnapshot = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
                    rssAtSnapshot = residentBytes();
                    inFlightAtSnapshot = inFlight;
                    snapshotPauseNanos = System.nanoTime() - p0;
                }
                try {
                    TimeUnit.MILLISECONDS.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /** What one variant measured. */
    private static final class Result {
        final Variant variant;
        final int calls;
        final AtomicLong succeeded = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final Map<String, Integer> pinnedFrames = new LinkedHashMap<>();
        Instant start;
        Instant end;
        long wallNanos;
        int peakCarriers;
        int peakThreads;
        long inFlightAtSnapshot;
        long heapAtSnapshot;
        long rssAtSnapshot;
        int pinned;
        int submitFailed;

        Result(Variant variant, int calls) {
            this.variant = variant;
            this.calls = calls;
        }

        void countEvents(List<RecordedEvent> events) {
            for (RecordedEvent e : events) {
                if (e.getStartTime().isBefore(start) || e.getStartTime().isAfter(end)) {
                    continue;
                }
                String type = e.getEventType().getName();
                if (type.equals("jdk.VirtualThreadPinned")) {
                    pinned++;
                    pinnedFrames.merge(topFrames(e), 1, Integer::sum);
                } else if (type.equals("jdk.VirtualThreadSubmitFailed")) {
                    submitFailed++;
                }
            }
        }

        private static String topFrames(RecordedEvent e) {
            if (e.getStackTrace() == null) {
                return "(no stack trace)";
            }
            StringBuilder s = new StringBuilder();
            int shown = 0;
            for (RecordedFrame f : e.getStackTrace().getFrames()) {
                if (shown++ == 8) {
                    break;
                }
                s.append(shown == 1 ? "" : " <- ").append(f.getMethod().getType().getName()).append('.')
                        .append(f.getMethod().getName()).append(':').append(f.getLineNumber());
            }
            return s.toString();
        }

        boolean snapshotTaken() {
            return inFlightAtSnapshot >= 0;
        }

        double heapPerCall() {
            return inFlightAtSnapshot <= 0 ? Double.NaN : (double) heapAtSnapshot / inFlightAtSnapshot;
        }

        String line() {
            return String.format(Locale.ROOT, "  %-24s %8.0f %8.0f %8d %8d %9d %9.1f %11.0f %8.1f %7d ok %d, refused %d, failed %d",
                    variant.label, wallNanos / 1e6, calls / (wallNanos / 1e9), peakCarriers, peakThreads,
                    inFlightAtSnapshot, heapAtSnapshot / 1048576.0, heapPerCall(), rssAtSnapshot / 1048576.0, pinned,
                    succeeded.get(), refused.get(), failed.get());
        }

        String json() {
            return String.format(Locale.ROOT, "{\"variant\":\"%s\",\"calls\":%d,\"wallMillis\":%.1f,\"peakCarriers\":%d,"
                            + "\"peakPlatformThreads\":%d,\"inFlightAtSnapshot\":%d,\"heapBytesAtSnapshot\":%d,"
                            + "\"heapBytesPerCall\":%.1f,\"rssBytesAtSnapshot\":%d,\"pinnedEvents\":%d,"
                            + "\"submitFailedEvents\":%d,\"succeeded\":%d,\"refused\":%d,\"failed\":%d}",
                    variant.label, calls, wallNanos / 1e6, peakCarriers, peakThreads, inFlightAtSnapshot, heapAtSnapshot,
                    heapPerCall(), rssAtSnapshot, pinned, submitFailed, succeeded.get(), refused.get(), failed.get());
        }
    }

    private static ThreadGroup rootGroup() {
        ThreadGroup g = Thread.currentThread().getThreadGroup();
        while (g.getParent() != null) {
            g = g.getParent();
        }
        return g;
    }

    /** VmRSS of this process from /proc, or 0 where there is none. */
    private static long residentBytes() {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    private static void log(String line) {
        System.err.println(line);
    }
}
