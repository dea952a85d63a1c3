package dev.stagger.shedding;

import dev.stagger.Clock;
import dev.stagger.RandomSource;
import dev.stagger.internal.Checks;
import dev.stagger.shedding.internal.ConcurrencyLimiter;
import dev.stagger.internal.LimitAlgorithm;
import dev.stagger.shedding.internal.Limits;
import dev.stagger.shedding.internal.Permit;
import dev.stagger.shedding.internal.RetryAfterRule;
import dev.stagger.shedding.internal.ShedResponse;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Sheds load before it queues: admits at most {@link #limit()} requests at once, a limit that
 * adapts to the latency the server shows ({@link Limit}), and answers the rest at once with
 * {@code 503} (or {@code 429}) and a {@code Retry-After} computed from how fast the server is
 * draining, jittered so that the clients it turns away do not all come back in the same second.
 * A server behind it keeps serving its capacity at the latency of a moderately busy server
 * instead of queueing without bound until every client times out.
 *
 * <pre>{@code
 * LoadSheddingFilter shedding = LoadSheddingFilter.builder("api")
 *         .retryMarker(RetryMarker.attemptHeader())   // shed retries before first attempts
 *         .build();
 * context.addFilter(new FilterHolder(shedding), "/api/*", EnumSet.of(DispatcherType.REQUEST));
 * }</pre>
 *
 * <table>
 * <caption>What happens to a request</caption>
 * <tr><th>Situation</th><th>Answer</th></tr>
 * <tr><td>in flight below the limit</td><td>runs; its latency is a sample for the limit</td></tr>
 * <tr><td>at the limit</td><td>{@code 503} problem+json, {@code Retry-After: n}, {@code Stagger-No-Retry: shed},
 * {@code Cache-Control: no-store}; not run</td></tr>
 * <tr><td>a retry (per the {@link RetryMarker}), in flight at or above {@code limit * (1 - firstAttemptReserve)}</td><td>shed likewise</td></tr>
 * <tr><td>the handler throws</td><td>the exception propagates; the request leaves the count but is no sample</td></tr>
 * <tr><td>the handler goes async</td><td>counted until the async cycle completes, times out or fails</td></tr>
 * <tr><td>still running after {@link GradientLimit}'s long-request threshold (1 s by default)</td><td>keeps running;
 * no longer counted against the limit (up to {@code limit} such requests), and no sample</td></tr>
 * </table>
 *
 * <p><b>Retry-After</b> is {@code ceil((inFlight + shed) / admitted)} seconds, with {@code shed}
 * and {@code admitted} counted over the trailing second — the time the server needs, at the rate
 * it is draining (at the limit, a request is admitted only when another completes), to serve what
 * it holds plus the demand it turned away in the last second — clamped to
 * [{@linkplain Builder#minRetryAfter(Duration) min}, {@linkplain Builder#maxRetryAfter(Duration) max}],
 * then spread uniformly over the whole seconds {@code n .. n + max(1, ceil(n * jitter))}.
 *
 * <p><b>With the idempotency filter.</b> Either order works. Behind
 * {@code IdempotencyFilter}, a shed request's 503 is a 5xx, so the idempotency filter releases
 * its key and the client's retry runs; replays of completed requests are served without touching
 * the limit. In front of it, a shed request never reaches the idempotency store. Do not put it
 * behind an idempotency filter that stores 5xx responses for replay: the shed 503 would be
 * replayed to every retry of that key.
 *
 * <p>Thread-safe. Admission is a compare-and-set on the in-flight count; what the limit algorithm
 * does per sample is described on each {@link Limit}. The clock is read twice per admitted request
 * and once per shed one. Register it for the {@code REQUEST} dispatch; a request dispatched again
 * (forward, include, async, error) passes through without being counted twice.
 */
public final class LoadSheddingFilter implements Filter {
    private static final String ADMITTED = LoadSheddingFilter.class.getName() + ".admitted";

    private final String name;
    private final Limit limitConfig;
    private final RetryMarker retryMarker;
    private final ShedResponse shedResponse;
    private final Clock clock;
    private final @Nullable SheddingListener listener;
    private final ConcurrencyLimiter limiter;
    private final AtomicInteger reportedLimit;

    private LoadSheddingFilter(Builder b) {
        this.name = b.name;
        this.limitConfig = b.limit;
        this.retryMarker = b.retryMarker;
        this.shedResponse = new ShedResponse(b.status, b.noRetrySignal);
        this.clock = b.clock;
        this.listener = b.sheddingListener;
        LimitAlgorithm algorithm = Limits.algorithm(b.limit, b.random, b.clock.nanoTime());
        RetryAfterRule rule = new RetryAfterRule(b.minRetryAfter.getSeconds(), b.maxRetryAfter.getSeconds(),
                b.retryAfterJitter);
        this.limiter = new ConcurrencyLimiter(algorithm, 1.0 - b.firstAttemptReserve, rule, b.clock, b.random);
        this.reportedLimit = new AtomicInteger(algorithm.limit());
    }

    /** A filter named {@code name} (in meters, events and logs). */
    public static Builder builder(String name) {
        return new Builder(Checks.name("name", name));
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)
                || req.getAttribute(ADMITTED) != null) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletRequest request = (HttpServletRequest) req;
        boolean retry = isRetry(request);
        long start = clock.nanoTime();
        Permit permit = limiter.tryAcquire(retry, start);
        if (permit == null) {
            shed((HttpServletResponse) res, retry, start);
            return;
        }
        boolean returned = false;
        try {
            request.setAttribute(ADMITTED, Boolean.TRUE);
            chain.doFilter(req, res);
            returned = true;
        } finally {
            if (returned && request.isAsyncStarted()) {
                request.getAsyncContext().addListener(new AsyncCompletion(permit));
            } else {
                release(permit, returned);
            }
        }
    }

    private boolean isRetry(HttpServletRequest request) {
        try {
            return retryMarker.isRetry(request);
        } catch (RuntimeException e) {
            return false; // a broken marker must not fail the request
        }
    }

    private void shed(HttpServletResponse response, boolean retry, long now) throws IOException {
        long seconds = limiter.shed(retry, now);
        shedResponse.write(response, seconds);
        if (listener != null) {
            try {
                listener.onShed(new SheddingEvent.Shed(name, retry, shedResponse.status(), Duration.ofSeconds(seconds),
                        limiter.limit(), limiter.inFlight()));
            } catch (RuntimeException ignored) {
                // listeners must not throw; the response is already written
            }
        }
    }

    private void release(Permit permit, boolean sample) {
        int limit = limiter.release(permit, sample);
        if (listener != null) {
            int previous = reportedLimit.getAndSet(limit);
            if (previous != limit) {
                try {
                    listener.onLimitChanged(new SheddingEvent.LimitChanged(name, previous, limit));
                } catch (RuntimeException ignored) {
                    // listeners must not throw
                }
            }
        }
    }

    /** Releases an async request once, however its cycle ends. */
    private final class AsyncCompletion implements AsyncListener {
        private final Permit permit;
        private final AtomicBoolean released = new AtomicBoolean();

        AsyncCompletion(Permit permit) {
            this.permit = permit;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            end(true);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            end(false);
        }

        @Override
        public void onError(AsyncEvent event) {
            end(false);
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            event.getAsyncContext().addListener(this); // started again: keep listening
        }

        private void end(boolean sample) {
            if (released.compareAndSet(false, true)) {
                release(permit, sample);
            }
        }
    }

    /** The name given to {@link #builder(String)}. */
    public String name() {
        return name;
    }

    /** The limit configuration this filter runs. */
    public Limit limitConfig() {
        return limitConfig;
    }

    /** The concurrency limit now. */
    public int limit() {
        return limiter.limit();
    }

    /**
     * Requests admitted and not yet finished, long ones included: with {@link GradientLimit} it may
     * exceed {@link #limit()}, by at most the limit.
     */
    public int inFlight() {
        return limiter.inFlight();
    }

    /** First attempts admitted since the filter was built (all requests, without a {@link RetryMarker}). */
    public long firstAttemptsAdmitted() {
        return limiter.firstAttemptsAdmitted();
    }

    /** Requests marked as retries admitted since the filter was built. */
    public long retriesAdmitted() {
        return limiter.retriesAdmitted();
    }

    /** First attempts shed since the filter was built. */
    public long firstAttemptsShed() {
        return limiter.firstAttemptsShed();
    }

    /** Requests marked as retries shed since the filter was built. */
    public long retriesShed() {
        return limiter.retriesShed();
    }

    /** The Retry-After a request shed now would get, before jitter. */
    public Duration retryAfter() {
        return Duration.ofSeconds(limiter.baseRetryAfterSeconds());
    }

    @Override
    public String toString() {
        return "LoadSheddingFilter{name=" + name + ", limit=" + limiter.limit() + ", inFlight=" + limiter.inFlight()
                + ", " + limitConfig + "}";
    }

    /** Configures a {@link LoadSheddingFilter}; {@link #build()} validates and snapshots. Not thread-safe. */
    public static final class Builder {
        private final String name;
        private Limit limit = GradientLimit.builder().build();
        private int status = 503;
        private boolean noRetrySignal = true;
        private Duration minRetryAfter = Duration.ofSeconds(1);
        private Duration maxRetryAfter = Duration.ofSeconds(30);
        private double retryAfterJitter = 0.5;
        private RetryMarker retryMarker = RetryMarker.none();
        private double firstAttemptReserve = 0.2;
        private @Nullable SheddingListener sheddingListener;
        private Clock clock = Clock.system();
        private RandomSource random = RandomSource.threadLocal();

        private Builder(String name) {
            this.name = name;
        }

        /** The limit algorithm. Default {@link GradientLimit} with its defaults. */
        public Builder limit(Limit limit) {
            this.limit = Checks.notNull("limit", limit);
            return this;
        }

        /** The status of a shed response: 503 (Service Unavailable, the default) or 429 (Too Many Requests). */
        public Builder status(int status) {
            if (status != 503 && status != 429) {
                throw new IllegalArgumentException("status must be 503 or 429, got " + status);
            }
            this.status = status;
            return this;
        }

        /**
         * Whether a shed response carries {@code Stagger-No-Retry: shed} (default true): Stagger's
         * HTTP clients then return it at once instead of retrying it within the same call, so a
         * chain of services does not multiply the load on a server that is shedding, and the
         * {@code Retry-After} goes back to whoever decides whether to come back (the application,
         * a job's schedule, the user). Clients that do not know the header retry after
         * {@code Retry-After} as before. Say false to let Stagger clients retry shed requests
         * within the call (a service with no callers above it that would retry).
         */
        public Builder noRetrySignal(boolean noRetrySignal) {
            this.noRetrySignal = noRetrySignal;
            return this;
        }

        /** The shortest Retry-After sent, whole seconds from 0 to 86,400. Default 1 s. */
        public Builder minRetryAfter(Duration minRetryAfter) {
            this.minRetryAfter = Checks.wholeSeconds("minRetryAfter", minRetryAfter, 0, 86_400);
            return this;
        }

        /** The longest Retry-After sent, jitter included; whole seconds from 1 to 86,400. Default 30 s. */
        public Builder maxRetryAfter(Duration maxRetryAfter) {
            this.maxRetryAfter = Checks.wholeSeconds("maxRetryAfter", maxRetryAfter, 1, 86_400);
            return this;
        }

        /**
         * How far Retry-After is spread above its computed value, as a fraction of it, in [0, 1]:
         * each shed request gets a whole number of seconds uniform in {@code n .. n + spread},
         * {@code spread = max(1, ceil(n * jitter))}; 0 sends {@code n} to everyone. Default 0.5.
         */
        public Builder retryAfterJitter(double retryAfterJitter) {
            this.retryAfterJitter = Checks.between("retryAfterJitter", retryAfterJitter, 0.0, 1.0);
            return this;
        }

        /** Which requests are retries. Default {@link RetryMarker#none()}: none are. */
        public Builder retryMarker(RetryMarker retryMarker) {
            this.retryMarker = Checks.notNull("retryMarker", retryMarker);
            return this;
        }

        /**
         * The top share of the limit kept for first attempts, in [0, 1]: a request the
         * {@link #retryMarker(RetryMarker)} marks as a retry is shed once in-flight reaches
         * {@code max(1, floor(limit * (1 - reserve)))}; 1 sheds every retry. Only matters with a
         * retry marker. Default 0.2.
         */
        public Builder firstAttemptReserve(double firstAttemptReserve) {
            this.firstAttemptReserve = Checks.between("firstAttemptReserve", firstAttemptReserve, 0.0, 1.0);
            return this;
        }

        /** Receives shed and limit-change events. Default none. */
        public Builder sheddingListener(SheddingListener sheddingListener) {
            this.sheddingListener = Checks.notNull("sheddingListener", sheddingListener);
            return this;
        }

        /** The time source for latencies and rates. Default {@link Clock#system()}. */
        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        /** Randomness for Retry-After jitter and the minRTT schedule. Default thread-local. */
        public Builder random(RandomSource random) {
            this.random = Checks.notNull("random", random);
            return this;
        }

        /** @throws IllegalArgumentException when {@code maxRetryAfter < minRetryAfter} */
        public LoadSheddingFilter build() {
            Checks.notBelow("maxRetryAfter", maxRetryAfter, "minRetryAfter", minRetryAfter);
            return new LoadSheddingFilter(this);
        }
    }
}
