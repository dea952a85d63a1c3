package dev.stagger.shedding;

import dev.stagger.http.StaggerHeaders;
import dev.stagger.internal.Checks;
import dev.stagger.shedding.internal.RepeatedKeys;
import jakarta.servlet.http.HttpServletRequest;

/**
 * Tells a {@link LoadSheddingFilter} which requests are retries, so that they can be shed before
 * first attempts ({@link LoadSheddingFilter.Builder#firstAttemptReserve(double)}). Retries are
 * what keeps an overloaded server overloaded after the cause is gone; when something must be
 * turned away, a first attempt is worth more.
 *
 * <p>Called once per request, on the request's thread, before it is admitted; must be
 * thread-safe, quick, and must not throw.
 */
@FunctionalInterface
public interface RetryMarker {
    /** The header of {@link #attemptHeader()}: the attempt number, 1 for the first attempt. */
    String ATTEMPT_HEADER = StaggerHeaders.ATTEMPT; // a compile-time constant: stagger-http need not be present at run time
    /** The header {@link #repeatedIdempotencyKey()} watches. */
    String IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

    /** True when {@code request} is a retry. */
    boolean isRetry(HttpServletRequest request);

    /** No request is a retry: all are treated alike. The default. */
    static RetryMarker none() {
        return request -> false;
    }

    /**
     * A request is a retry when it carries {@value #ATTEMPT_HEADER} with an attempt number above
     * 1 ({@code Stagger-Attempt: 2} on the first retry). Exact: the client says which attempt it
     * sends. A missing or malformed value counts as a first attempt.
     */
    static RetryMarker attemptHeader() {
        return attemptHeader(ATTEMPT_HEADER);
    }

    /**
     * As {@link #attemptHeader()} with another header carrying the attempt number (1-based), such
     * as one a proxy sets.
     */
    static RetryMarker attemptHeader(String headerName) {
        String name = headerName(headerName);
        return request -> attemptAboveOne(request.getHeader(name));
    }

    /**
     * A request is a retry when its {@value #IDEMPOTENCY_KEY_HEADER} was seen recently (among
     * about the last 65,536 keys). Needs nothing from the client beyond the key it already sends
     * for a retried POST; approximate: a key seen on another server of the fleet, or evicted by
     * newer keys, goes unrecognised.
     */
    static RetryMarker repeatedIdempotencyKey() {
        return repeatedKey(IDEMPOTENCY_KEY_HEADER, 1 << 16);
    }

    /**
     * A request is a retry when the value of {@code headerName} is among those of about the last
     * {@code capacity} requests that carried it (a fixed table of 8 bytes per slot, lossy when
     * full, nothing allocated per request).
     *
     * @param capacity 1 to 16,777,216 slots, rounded up to a power of two
     */
    static RetryMarker repeatedKey(String headerName, int capacity) {
        String name = headerName(headerName);
        Checks.atLeast("capacity", capacity, 1);
        if (capacity > 1 << 24) {
            throw new IllegalArgumentException("capacity must be at most " + (1 << 24) + ", got " + capacity);
        }
        RepeatedKeys keys = new RepeatedKeys(capacity);
        return request -> {
            String value = request.getHeader(name);
            return value != null && !value.isEmpty() && keys.seenBefore(value);
        };
    }

    /** A request is a retry when this marker or {@code other} says so; both always see it. */
    default RetryMarker or(RetryMarker other) {
        Checks.notNull("other", other);
        return request -> {
            boolean mine = isRetry(request);
            boolean theirs = other.isRetry(request);
            return mine || theirs;
        };
    }

    private static String headerName(String name) {
        Checks.notNull("headerName", name);
        if (name.isEmpty() || name.length() > 200 || !name.chars().allMatch(RetryMarker::tokenChar)) {
            throw new IllegalArgumentException("headerName must be an HTTP header name, got " + Checks.echo(name));
        }
        return name;
    }

    private static boolean tokenChar(int c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
    }

    private static boolean attemptAboveOne(String value) {
        if (value == null) {
            return false;
        }
        String v = value.trim();
        if (v.isEmpty() || v.length() > 9) {
            return false;
        }
        for (int i = 0; i < v.length(); i++) {
            if (v.charAt(i) < '0' || v.charAt(i) > '9') {
                return false;
            }
        }
        return Integer.parseInt(v) > 1;
    }
}
