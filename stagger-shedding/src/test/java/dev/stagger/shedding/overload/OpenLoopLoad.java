package dev.stagger.shedding.overload;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * An open-loop load generator: sends GETs at a fixed rate for a fixed time whatever the server
 * does (as independent users do), with a per-request timeout, and records every outcome. Bounded:
 * at most {@code maxOutstanding} requests are in flight (a send that would pass it is counted as
 * not sent), it stops sending after the duration, and it waits for the last answers at most one
 * timeout plus a second. Plain {@link HttpClient}, HTTP/1.1, no retries. Loopback only.
 */
public final class OpenLoopLoad {
    /** A request's status when its timeout passed before an answer. */
    public static final int TIMED_OUT = -1;
    /** A request's status when it failed otherwise (connection refused, reset). */
    public static final int FAILED = -2;

    private final double ratePerSecond;
    private final Duration duration;
    private final Duration warmup;
    private final Duration timeout;
    private final int maxOutstanding;

    /**
     * @param warmup requests sent before this much time has passed are sent but not recorded
     */
    public OpenLoopLoad(double ratePerSecond, Duration duration, Duration warmup, Duration timeout, int maxOutstanding) {
        if (!(ratePerSecond > 0) || duration.compareTo(warmup) <= 0 || maxOutstanding < 1) {
            throw new IllegalArgumentException("rate must be positive and duration longer than warmup");
        }
        this.ratePerSecond = ratePerSecond;
        this.duration = duration;
        this.warmup = warmup;
        this.timeout = timeout;
        this.maxOutstanding = maxOutstanding;
    }

    /** Runs the load against {@code uri} (which must be on 127.0.0.1) and returns what happened. */
    public Result run(URI uri) throws InterruptedException {
        if (!"127.0.0.1".equals(uri.getHost())) {
            throw new IllegalArgumentException("load goes to 127.0.0.1 only, got " + uri.getHost());
        }
        long intervalNanos = (long) (1e9 / ratePerSecond);
        int planned = (int) Math.ceil(ratePerSecond * duration.toNanos() / 1e9);
        long warmupNanos = warmup.toNanos();
        long[] sentAt = new long[planned];
        long[] latency = new long[planned];
        int[] status = new int[planned];
        long[] retryAfter = new long[planned];
        Arrays.fill(status, Integer.MIN_VALUE);
        Arrays.fill(sentAt, -1);
        Semaphore outstanding = new Semaphore(maxOutstanding);
        ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "open-loop-client");
            t.setDaemon(true);
            return t;
        });
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor)
                .connectTimeout(timeout).build();
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
        long t0 = System.nanoTime();
        try {
            for (int i = 0; i < planned; i++) {
                long due = t0 + i * intervalNanos;
                long wait;
                while ((wait = due - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                if (!outstanding.tryAcquire()) {
                    continue; // over the bound: not sent
                }
                int index = i;
                long start = System.nanoTime();
                sentAt[i] = start - t0;
                client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, failure) -> {
                    latency[index] = System.nanoTime() - start;
                    if (failure == null) {
                        retryAfter[index] = response.headers().firstValueAsLong("Retry-After").orElse(-1);
                        status[index] = response.statusCode();
                    } else {
                        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                                ? failure.getCause() : failure;
                        status[index] = cause instanceof HttpTimeoutException ? TIMED_OUT : FAILED;
                    }
                    outstanding.release();
                });
            }
            long sendingTook = System.nanoTime() - t0;
            boolean drained = outstanding.tryAcquire(maxOutstanding, timeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
            if (drained) {
                outstanding.release(maxOutstanding);
            }
            return new Result(ratePerSecond, (duration.toNanos() - warmupNanos) / 1e9, sendingTook / 1e9,
                    warmupNanos / intervalNanos, sentAt, latency, status, retryAfter);
        } finally {
            executor.shutdownNow();
        }
    }

    /** What one run produced; only requests sent after the warmup count. Immutable once built. */
    public static final class Result {
        public final double offeredPerSecond;
        public final double measuredSeconds;
        public final double sendingSeconds;
        public final int sent;
        public final int ok;
        public final int shed;
        public final int timedOut;
        public final int failed;
        public final int unanswered;
        public final int notSent;
        public final int shedWithRetryAfter;
        public final long minRetryAfter;
        public final long maxRetryAfter;
        public final int distinctRetryAfter;
        private final long[] okLatencies;

        Result(double offered, double measuredSeconds, double sendingSeconds, long firstMeasured, long[] sentAt,
               long[] latency, int[] status, long[] retryAfter) {
            this.offeredPerSecond = offered;
            this.measuredSeconds = measuredSeconds;
            this.sendingSeconds = sendingSeconds;
            long[] oks = new long[status.length];
            int sent = 0, ok = 0, shed = 0, timedOut = 0, failed = 0, unanswered = 0, withRetryAfter = 0, notSent = 0;
            long minRa = Long.MAX_VALUE, maxRa = Long.MIN_VALUE;
            java.util.Set<Long> values = new java.util.HashSet<>();
            for (int i = (int) firstMeasured; i < status.length; i++) {
                if (sentAt[i] < 0) {
                    notSent++;
                    continue;
                }
                sent++;
                int s = status[i];
                if (s >= 200 && s < 300) {
                    oks[ok++] = latency[i];
                } else if (s == 503 || s == 429) {
                    shed++;
                    if (retryAfter[i] >= 0) {
                        withRetryAfter++;
                        minRa = Math.min(minRa, retryAfter[i]);
                        maxRa = Math.max(maxRa, retryAfter[i]);
                        values.add(retryAfter[i]);
                    }
                } else if (s == TIMED_OUT) {
                    timedOut++;
                } else if (s == Integer.MIN_VALUE) {
                    unanswered++;
                } else {
                    failed++;
                }
            }
            int distinct = values.size();
            this.sent = sent;
            this.ok = ok;
            this.shed = shed;
            this.timedOut = timedOut;
            this.failed = failed;
            this.unanswered = unanswered;
            this.notSent = notSent;
            this.shedWithRetryAfter = withRetryAfter;
            this.minRetryAfter = withRetryAfter == 0 ? -1 : minRa;
            this.maxRetryAfter = withRetryAfter == 0 ? -1 : maxRa;
            this.distinctRetryAfter = distinct;
            this.okLatencies = Arrays.copyOf(oks, ok);
            Arrays.sort(okLatencies);
        }

        /** Successful answers per second of the measured part. */
        public double goodputPerSecond() {
            return ok / measuredSeconds;
        }

        /** The {@code p}-quantile (0..1) of successful answers' latency; zero when there were none. */
        public Duration okLatency(double p) {
            if (okLatencies.length == 0) {
                return Duration.ZERO;
            }
            int index = (int) Math.ceil(p * okLatencies.length) - 1;
            return Duration.ofNanos(okLatencies[Math.max(0, Math.min(okLatencies.length - 1, index))]);
        }

        @Override
        public String toString() {
            return String.format(java.util.Locale.ROOT,
                    "sent=%d ok=%d shed=%d timedOut=%d failed=%d unanswered=%d notSent=%d goodput=%.1f/s p50=%dms p99=%dms "
                            + "retryAfter=%d..%d s (%d values)",
                    sent, ok, shed, timedOut, failed, unanswered, notSent, goodputPerSecond(),
                    okLatency(0.5).toMillis(), okLatency(0.99).toMillis(), minRetryAfter, maxRetryAfter, distinctRetryAfter);
        }
    }
}
