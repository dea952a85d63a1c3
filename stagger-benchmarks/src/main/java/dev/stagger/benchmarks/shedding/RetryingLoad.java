package dev.stagger.benchmarks.shedding;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.EndReason;
import dev.stagger.RetryBudget;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.http.RetryingHttpClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * An open-loop load generator whose calls go through Stagger's {@link RetryingHttpClient}: calls
 * start at a fixed rate for a fixed time whatever the server does, each with the default retry
 * policy (3 attempts, exponential 200 ms x2 up to 5 s, full jitter), {@code timeout} per attempt,
 * {@code 3 x timeout} for the whole call, one shared {@link RetryBudget} (its defaults) and,
 * optionally, one shared {@link AdaptiveThrottle} (its defaults). Bounded like the plain
 * generator: at most {@code maxOutstanding} calls in flight (a call that would pass it is counted
 * as not started), no call started after the duration, and it waits for the last ones at most the
 * call deadline plus a second. Loopback only.
 */
final class RetryingLoad {
    private final double ratePerSecond;
    private final Duration duration;
    private final Duration warmup;
    private final Duration timeout;
    private final int maxOutstanding;
    private final boolean throttled;

    RetryingLoad(double ratePerSecond, Duration duration, Duration warmup, Duration timeout, int maxOutstanding,
                 boolean throttled) {
        this.ratePerSecond = ratePerSecond;
        this.duration = duration;
        this.warmup = warmup;
        this.timeout = timeout;
        this.maxOutstanding = maxOutstanding;
        this.throttled = throttled;
    }

    Result run(URI uri) throws InterruptedException {
        if (!"127.0.0.1".equals(uri.getHost())) {
            throw new IllegalArgumentException("load goes to 127.0.0.1 only, got " + uri.getHost());
        }
        long intervalNanos = (long) (1e9 / ratePerSecond);
        int planned = (int) Math.ceil(ratePerSecond * duration.toNanos() / 1e9);
        int firstMeasured = (int) (warmup.toNanos() / intervalNanos);
        long[] latency = new long[planned];
        boolean[] ok = new boolean[planned];
        boolean[] started = new boolean[planned];
        Map<EndReason, AtomicLong> reasons = new EnumMap<>(EndReason.class);
        for (EndReason r : EndReason.values()) {
            reasons.put(r, new AtomicLong());
        }
        AtomicLong attempts = new AtomicLong();
        Semaphore outstanding = new Semaphore(maxOutstanding);
        ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "retrying-client");
            t.setDaemon(true);
            return t;
        });
        HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor)
                .connectTimeout(timeout).build();
        long[] measuredFrom = {Long.MAX_VALUE};
        AdaptiveThrottle throttle = AdaptiveThrottle.of("overload");
        RetryingHttpClient.Builder builder = RetryingHttpClient.builder(jdk).service("overload")
                .policy(RetryPolicy.builder().attemptTimeout(timeout).deadline(timeout.multipliedBy(3)).build())
                .budget(RetryBudget.of("overload"))
                .listener(new RetryListener() {
                    @Override
                    public void onAttemptFinished(RetryEvent.AttemptFinished event) {
                        if (System.nanoTime() >= measuredFrom[0]) {
                            attempts.incrementAndGet();
                        }
                    }

                    @Override
                    public void onCallFinished(RetryEvent.CallFinished event) {
                        if (System.nanoTime() >= measuredFrom[0]) {
                            reasons.get(event.reason()).incrementAndGet();
                        }
                    }
                });
        if (throttled) {
            builder.throttle(throttle);
        }
        RetryingHttpClient client = builder.build();
        HttpRequest request = HttpRequest.newBuilder(uri).GET().build();
        long t0 = System.nanoTime();
        measuredFrom[0] = t0 + warmup.toNanos();
        try {
            for (int i = 0; i < planned; i++) {
                long due = t0 + i * intervalNanos;
                long wait;
                while ((wait = due - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                if (!outstanding.tryAcquire()) {
                    continue; // over the bound: not started
                }
                int index = i;
                started[i] = true;
                long start = System.nanoTime();
                client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, failure) -> {
                    latency[index] = System.nanoTime() - start;
                    ok[index] = failure == null && response.statusCode() / 100 == 2;
                    outstanding.release();
                });
            }
            boolean drained = outstanding.tryAcquire(maxOutstanding, timeout.multipliedBy(3).toMillis() + 1_000,
                    TimeUnit.MILLISECONDS);
            if (drained) {
                outstanding.release(maxOutstanding);
            }
        } finally {
            executor.shutdownNow();
        }
        double seconds = (duration.toNanos() - warmup.toNanos()) / 1e9;
        long[] oks = new long[planned];
        int okCount = 0;
        int startedCount = 0;
        for (int i = firstMeasured; i < planned; i++) {
            if (started[i]) {
                startedCount++;
            }
            if (ok[i]) {
                oks[okCount++] = latency[i];
            }
        }
        long[] okLatencies = Arrays.copyOf(oks, okCount);
        Arrays.sort(okLatencies);
        Map<EndReason, Long> counted = new EnumMap<>(EndReason.class);
        reasons.forEach((r, n) -> counted.put(r, n.get()));
        return new Result(seconds, planned - firstMeasured, startedCount, okCount, attempts.get(), counted, okLatencies);
    }

    /** What one run produced, counting calls started after the warmup. */
    record Result(double measuredSeconds, int planned, int started, int ok, long attempts, Map<EndReason, Long> reasons,
                  long[] okLatencies) {
        /** Calls that succeeded per second of the measured part. */
        double goodputPerSecond() {
            return ok / measuredSeconds;
        }

        /** Attempts that reached the server (or were refused there) per second. */
        double attemptsPerSecond() {
            return attempts / measuredSeconds;
        }

        Duration okLatency(double p) {
            if (okLatencies.length == 0) {
                return Duration.ZERO;
            }
            int index = (int) Math.ceil(p * okLatencies.length) - 1;
            return Duration.ofNanos(okLatencies[Math.max(0, Math.min(okLatencies.length - 1, index))]);
        }

        long reason(EndReason r) {
            return reasons.getOrDefault(r, 0L);
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT,
                    "calls=%d ok=%d attempts=%d goodput=%.1f/s attempts/s=%.1f p50=%dms p99=%dms throttled=%d budget=%d "
                            + "deadline=%d exhausted=%d",
                    started, ok, attempts, goodputPerSecond(), attemptsPerSecond(), okLatency(0.5).toMillis(),
                    okLatency(0.99).toMillis(), reason(EndReason.THROTTLED), reason(EndReason.BUDGET),
                    reason(EndReason.DEADLINE), reason(EndReason.EXHAUSTED));
        }
    }
}
