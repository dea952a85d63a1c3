package dev.stagger.http;

import dev.stagger.CircuitBreaker;
import java.net.http.HttpResponse;
import java.util.Arrays;

/**
 * Which HTTP statuses {@link RetryingHttpClient} retries, and for which requests. Immutable; the
 * {@code with...} methods return new tables.
 *
 * <p>The default table:
 * <ul>
 *   <li>{@link Rule#RETRY} — 408, 429, 503: statuses that show the request was not processed
 *       (the request did not arrive whole; the client is throttled; the server is unavailable),
 *       so any request may be sent again. This holds only as far as the server and the
 *       gateways before it use these statuses as RFC 9110 describes: a router that answers 503
 *       after it forwarded the request (timing out on a slow application) breaks it; for such a
 *       service, move 503 to {@link #withRetryIfIdempotent}.
 *   <li>{@link Rule#RETRY_IF_IDEMPOTENT} — 500, 502, 504 (the request may have been processed
 *       before the failure) and 409 (with an {@code Idempotency-Key}: "the first attempt is still
 *       in flight"): retried only for requests that are safe to send again (an idempotent method,
 *       or a key the server is declared to honour; see {@link RetryingHttpClient}).
 *   <li>{@link Rule#NEVER} — everything else: 400, 401, 403, 404, 422 and the other 4xx/5xx
 *       describe the request, so sending it again gives the same answer.
 * </ul>
 */
public final class StatusTable {
    /** How one status is treated. */
    public enum Rule {
        /** The status shows the request was not processed: retried for every request. */
        RETRY,
        /** The request may have been processed: retried only for requests safe to send again. */
        RETRY_IF_IDEMPOTENT,
        /** Never retried. */
        NEVER
    }

    private static final StatusTable DEFAULTS = new StatusTable(new Rule[600])
            .withRetry(408, 429, 503)
            .withRetryIfIdempotent(409, 500, 502, 504);

    private final Rule[] rules; // index: status 100..599; null means NEVER

    private StatusTable(Rule[] rules) {
        this.rules = rules;
    }

    /** The default table described in the class comment. */
    public static StatusTable defaults() {
        return DEFAULTS;
    }

    /** A table that retries no status at all (only network failures are then retried). */
    public static StatusTable none() {
        return new StatusTable(new Rule[600]);
    }

    /**
     * This table with {@code statuses} retried for every request, even one that is not safe to
     * send twice: use it only for statuses that show the request was not processed.
     */
    public StatusTable withRetry(int... statuses) {
        return with(Rule.RETRY, statuses);
    }

    /** This table with {@code statuses} retried only for requests safe to send again. */
    public StatusTable withRetryIfIdempotent(int... statuses) {
        return with(Rule.RETRY_IF_IDEMPOTENT, statuses);
    }

    /** This table with {@code statuses} never retried. */
    public StatusTable withNever(int... statuses) {
        return with(Rule.NEVER, statuses);
    }

    /** The rule for {@code status}; statuses outside 100..599 are never retried. */
    public Rule rule(int status) {
        if (status < 100 || status > 599) {
            return Rule.NEVER;
        }
        Rule r = rules[status];
        return r == null ? Rule.NEVER : r;
    }

    /**
     * True when a response with {@code status} is retried for a request that is ({@code safe}) or
     * is not safe to send again.
     */
    public boolean retries(int status, boolean safe) {
        Rule r = rule(status);
        return r == Rule.RETRY || (r == Rule.RETRY_IF_IDEMPOTENT && safe);
    }

    /**
     * What a {@link dev.stagger.CircuitBreaker} should count as a failure of the downstream
     * ({@code CircuitBreaker.builder(..).failurePredicate(table.failures())}): any exception, and any
     * status this table retries. A 404 or 422 says nothing about the downstream's health; by
     * default a breaker counts no response at all as a failure, so a 503 storm would go unseen.
     */
    public CircuitBreaker.FailurePredicate failures() {
        return (result, failure) -> failure != null
                || (result instanceof HttpResponse<?> r && retries(r.statusCode(), true));
    }

    private StatusTable with(Rule rule, int... statuses) {
        Rule[] copy = rules.clone();
        for (int s : statuses) {
            if (s < 100 || s > 599) {
                throw new IllegalArgumentException("status must be in 100..599, got " + s);
            }
            if (s < 400 && rule != Rule.NEVER) {
                throw new IllegalArgumentException("status must be an error (400..599) to be retried, got " + s);
            }
            copy[s] = rule;
        }
        return new StatusTable(copy);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StatusTable t && Arrays.equals(normal(rules), normal(t.rules));
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(normal(rules));
    }

    private static Rule[] normal(Rule[] rules) {
        Rule[] n = rules.clone();
        for (int i = 0; i < n.length; i++) {
            if (n[i] == null) {
                n[i] = Rule.NEVER;
            }
        }
        return n;
    }

    @Override
    public String toString() {
        StringBuilder retry = new StringBuilder();
        StringBuilder ifIdempotent = new StringBuilder();
        for (int s = 100; s < rules.length; s++) {
            if (rules[s] == Rule.RETRY) {
                retry.append(retry.length() == 0 ? "" : ",").append(s);
            } else if (rules[s] == Rule.RETRY_IF_IDEMPOTENT) {
                ifIdempotent.append(ifIdempotent.length() == 0 ? "" : ",").append(s);
            }
        }
        return "StatusTable{retry=[" + retry + "], retryIfIdempotent=[" + ifIdempotent + "]}";
    }
}
