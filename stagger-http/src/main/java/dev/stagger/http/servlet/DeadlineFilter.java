package dev.stagger.http.servlet;

import dev.stagger.Clock;
import dev.stagger.RetryScope;
import dev.stagger.internal.Checks;
import dev.stagger.http.StaggerHeaders;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Makes the caller's remaining deadline ({@value StaggerHeaders#DEADLINE}) the bound of
 * everything done while serving a request, and tells the caller not to retry a failure that a
 * Stagger retry behind it already decided ({@value StaggerHeaders#NO_RETRY}).
 *
 * <pre>{@code
 * DeadlineFilter deadlines = DeadlineFilter.builder().build();
 * context.addFilter(new FilterHolder(deadlines), "/*", EnumSet.of(DispatcherType.REQUEST,
 *         DispatcherType.ASYNC, DispatcherType.ERROR));
 * }</pre>
 *
 * <h2>The deadline</h2>
 * While the request runs through the rest of the chain, a {@link RetryScope} is open on its thread,
 * bounded by the header's milliseconds from the moment the request reached the filter: every
 * Stagger retry started there ends by then (no wait, attempt or attempt timeout past it), and
 * Stagger's HTTP clients send what is left to the next service. Without the header the scope has
 * no bound and only observes. The header is read as {@link StaggerHeaders#parseDeadlineMillis}
 * says; a value it refuses (a sign, a fraction, a unit, 19 digits or more, garbage) is ignored and
 * counted ({@link #rejectedDeadlines()}), never an error; a deadline beyond
 * {@link Builder#maxDeadline} (default 5 minutes) is capped to it and counted
 * ({@link #cappedDeadlines()}); a request from a caller not trusted
 * ({@link Builder#deadlinesTrusted}) has its header ignored. A request that arrives with {@code 0} ms left is not run: it is answered
 * {@code 504} with {@code Stagger-No-Retry: deadline} ({@link #expiredDeadlines()}); the caller
 * has given up on it.
 *
 * <h2>Do not retry</h2>
 * When the answer is an error — a 5xx or 429 — and a Stagger retry run while serving the request
 * ended without success ({@link RetryScope#decided()}: it gave up, judged the failure not
 * retryable, or was refused by a breaker, budget, throttle, nesting rule or the deadline), the
 * response carries {@code Stagger-No-Retry: <reason>} ({@link StaggerHeaders#noRetryToken}): the
 * failure has been retried as much as it will be, so Stagger's clients upstream return it
 * instead of multiplying the attempts. The header is added when the status is set (before the
 * response is committed), or at the end of the chain. An exception that leaves the chain is
 * answered by the container's error page: the decision is kept as a request attribute, so the
 * filter, registered for the {@code ERROR} dispatch too, marks that page.
 *
 * <h2>Dispatches</h2>
 * The deadline is fixed when the request first reaches the filter and kept as a request
 * attribute: an {@code ASYNC} or {@code ERROR} dispatch runs under what is left of it, on its own
 * thread. Each scope is closed, on its thread, when the chain returns or throws, so it never
 * outlives the dispatch that opened it nor leaks to the next request served on that thread. Work
 * that an async request hands to threads of its own is not bounded by the filter, and a retry
 * that ends there after the dispatch returned is not seen by it: bound that work from
 * {@link RetryScope#currentRemaining()} read on the request thread, and mark its answer yourself.
 *
 * <p>Thread-safe; one instance serves every request.
 */
public final class DeadlineFilter implements Filter {
    /** Request attribute: the deadline as {@link Clock#nanoTime()}, or {@link #NO_DEADLINE}. */
    private static final String DEADLINE_AT = DeadlineFilter.class.getName() + ".deadlineAt";
    /** Request attribute: the no-retry reason decided by a dispatch that threw. */
    private static final String DECIDED = DeadlineFilter.class.getName() + ".decided";
    private static final Long NO_DEADLINE = Long.MIN_VALUE;

    private final Duration maxDeadline;
    private final Predicate<HttpServletRequest> trusts;
    private final Clock clock;
    private final LongAdder rejected = new LongAdder();
    private final LongAdder capped = new LongAdder();
    private final LongAdder expired = new LongAdder();

    private DeadlineFilter(Builder b) {
        this.maxDeadline = b.maxDeadline;
        this.trusts = b.trusts;
        this.clock = b.clock;
    }

    /** A builder with the defaults: 5 minutes at most, every caller trusted, the system clock. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
            chain.doFilter(req, res);
            return;
        }
        Duration bound = bound(request);
        if (bound != null && bound.isZero() && request.getDispatcherType() == DispatcherType.REQUEST) {
            expired.increment();
            response.setHeader(StaggerHeaders.NO_RETRY, "deadline");
            response.sendError(HttpServletResponse.SC_GATEWAY_TIMEOUT);
            return;
        }
        RetryScope scope = RetryScope.open(bound, clock);
        NoRetryResponse marked = new NoRetryResponse(response, () -> reason(scope, request));
        try {
            chain.doFilter(request, marked);
            marked.markIfError();
        } catch (IOException | ServletException | RuntimeException | Error e) {
            String reason = reason(scope, request);
            if (reason != null) {
                request.setAttribute(DECIDED, reason); // for the error page's dispatch
                if (!response.isCommitted() && !response.containsHeader(StaggerHeaders.NO_RETRY)) {
                    response.setHeader(StaggerHeaders.NO_RETRY, reason); // the container answers an exception with a 5xx
                }
            }
            throw e;
        } finally {
            scope.close();
        }
    }

    /** The no-retry reason for this request so far: a retry on this dispatch, or one that threw before. */
    private static @Nullable String reason(RetryScope scope, HttpServletRequest request) {
        var decided = scope.decided();
        if (decided.isPresent()) {
            return StaggerHeaders.noRetryToken(decided.get().reason());
        }
        return request.getAttribute(DECIDED) instanceof String s ? s : null;
    }

    /** What is left of the request's deadline, fixed on its first dispatch; null for none. */
    private @Nullable Duration bound(HttpServletRequest request) {
        long now = clock.nanoTime();
        Object at = request.getAttribute(DEADLINE_AT);
        if (!(at instanceof Long)) {
            Duration incoming = incoming(request);
            at = incoming == null ? NO_DEADLINE : now + incoming.toNanos();
            request.setAttribute(DEADLINE_AT, at);
        }
        long deadlineAt = (Long) at;
        if (deadlineAt == NO_DEADLINE) {
            return null;
        }
        return Duration.ofNanos(Math.max(0, deadlineAt - now));
    }

    /** The header's deadline, capped; null when absent, refused or not trusted. */
    private @Nullable Duration incoming(HttpServletRequest request) {
        String value = request.getHeader(StaggerHeaders.DEADLINE);
        if (value == null || !trusted(request)) {
            return null;
        }
        OptionalLong ms = StaggerHeaders.parseDeadlineMillis(value);
        if (ms.isEmpty()) {
            rejected.increment();
            return null;
        }
        if (ms.getAsLong() > maxDeadline.toMillis()) {
            capped.increment();
            return maxDeadline;
        }
        return Duration.ofMillis(ms.getAsLong());
    }

    private boolean trusted(HttpServletRequest request) {
        try {
            return trusts.test(request);
        } catch (RuntimeException e) {
            return false; // a broken predicate must not fail the request
        }
    }

    /** Requests whose deadline header was refused (not decimal milliseconds) and ignored. */
    public long rejectedDeadlines() {
        return rejected.sum();
    }

    /** Requests whose deadline was longer than the maximum and capped to it. */
    public long cappedDeadlines() {
        return capped.sum();
    }

    /** Requests that arrived with no time left and were answered 504 without being run. */
    public long expiredDeadlines() {
        return expired.sum();
    }

    /** The longest deadline honoured. */
    public Duration maxDeadline() {
        return maxDeadline;
    }

    @Override
    public String toString() {
        return "DeadlineFilter{max=" + maxDeadline + "}";
    }

    /** Builds a {@link DeadlineFilter}. Not thread-safe; {@link #build()} snapshots it. */
    public static final class Builder {
        private Duration maxDeadline = Duration.ofMinutes(5);
        private Predicate<HttpServletRequest> trusts = request -> true;
        private Clock clock = Clock.system();

        private Builder() {
        }

        /**
         * The longest deadline honoured; a longer one is capped to it (a caller cannot make this
         * server hold work longer). Default 5 minutes; at least 1 ms.
         */
        public Builder maxDeadline(Duration maxDeadline) {
            Checks.notNull("maxDeadline", maxDeadline);
            if (maxDeadline.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException("maxDeadline must be at least 1 ms, got " + maxDeadline);
            }
            this.maxDeadline = maxDeadline;
            return this;
        }

        /**
         * Whose deadline header is honoured; others' is ignored, as if absent. Default: every
         * caller. A predicate that throws counts as false. For example, only callers inside the
         * network: {@code request -> request.getRemoteAddr().startsWith("10.")}.
         */
        public Builder deadlinesTrusted(Predicate<HttpServletRequest> trusted) {
            this.trusts = Checks.notNull("deadlinesTrusted", trusted);
            return this;
        }

        /**
         * The clock the deadline is measured on: it bounds the retries on the same clock (a
         * retry on another clock is not bounded). Default {@link Clock#system()}, every retry's
         * default; a virtual clock in tests.
         */
        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        public DeadlineFilter build() {
            return new DeadlineFilter(this);
        }
    }
}
