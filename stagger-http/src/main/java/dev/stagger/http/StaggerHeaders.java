package dev.stagger.http;

import dev.stagger.AttemptContext;
import dev.stagger.EndReason;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The headers Stagger's HTTP clients and servers exchange, and the one place they are written and
 * read. Clients ({@link RetryingHttpClient} and the Spring Boot starter's interceptor and filter)
 * send {@value #ATTEMPT} and {@value #DEADLINE}; a Stagger server (the deadline filter of
 * {@code dev.stagger.http.servlet}, the load-shedding filter) answers with {@value #NO_RETRY}.
 *
 * <ul>
 *   <li>{@value #ATTEMPT}{@code : <n>} — the attempt number, 1 on the first attempt.
 *   <li>{@value #DEADLINE}{@code : <ms>} — the time the caller still waits for this attempt, in
 *       whole milliseconds (decimal digits only; 0 = already out of time). A remaining time, not
 *       an instant, as gRPC's {@code grpc-timeout}: clock skew between hosts does not matter,
 *       only the network time of the request, which the receiver's bound then includes.
 *   <li>{@value #NO_RETRY}{@code : <reason>} — "do not retry this answer": it is the result of a
 *       retry that already gave up, or of a breaker, budget, throttle or load-shedding refusal.
 *       The value is a short token for logs ({@link #noRetryReason}); any value means the same.
 *       gRPC's negative {@code grpc-retry-pushback-ms} and the SRE book's "overloaded; don't
 *       retry" error play this role.
 * </ul>
 */
public final class StaggerHeaders {
    /** The attempt number, 1 on the first attempt, 2, 3, ... on retries. */
    public static final String ATTEMPT = "Stagger-Attempt";
    /** The caller's remaining deadline for this attempt, in whole milliseconds. */
    public static final String DEADLINE = "Stagger-Deadline-Ms";
    /** On a response: do not retry it. The value is a reason token. */
    public static final String NO_RETRY = "Stagger-No-Retry";

    /** {@value #NO_RETRY} reason: a load-shedding filter turned the request away. */
    public static final String SHED = "shed";

    /** Longest deadline value read: 18 digits always fit a {@code long}. */
    private static final int MAX_DIGITS = 18;
    /** Longest reason token kept; longer or odd values are reported as {@code unspecified}. */
    private static final int MAX_REASON = 32;

    private StaggerHeaders() {
    }

    /**
     * Sets the headers of one attempt through {@code setHeader} (name, value; replacing a value
     * already there): {@value #ATTEMPT} always, {@value #DEADLINE} when the attempt has a
     * deadline ({@link AttemptContext#remaining()}, which an enclosing retry or request scope
     * already bounds). Every Stagger client calls this, so all send the same.
     */
    public static void forAttempt(AttemptContext attempt, BiConsumer<String, String> setHeader) {
        setHeader.accept(ATTEMPT, Integer.toString(attempt.attempt()));
        Optional<Duration> remaining = attempt.remaining();
        if (remaining.isPresent()) {
            setHeader.accept(DEADLINE, deadlineValue(remaining.get()));
        }
    }

    /**
     * The {@value #DEADLINE} value for {@code remaining}: whole milliseconds, rounded down (the
     * receiver's bound is never later than the sender's), 0 for a negative duration.
     */
    public static String deadlineValue(Duration remaining) {
        if (remaining.isNegative()) {
            return "0";
        }
        long ms;
        try {
            ms = remaining.toMillis();
        } catch (ArithmeticException e) {
            ms = Long.MAX_VALUE;
        }
        return Long.toString(ms);
    }

    /**
     * A {@value #DEADLINE} value as milliseconds: decimal digits only (spaces around are allowed),
     * at most 18 of them. Empty for anything else — a sign, a fraction, a unit, a number too long
     * for 18 digits, an empty value — which a receiver ignores (and counts) rather than fail on.
     * Capping a valid but long deadline is the receiver's choice.
     */
    public static OptionalLong parseDeadlineMillis(@Nullable String value) {
        if (value == null) {
            return OptionalLong.empty();
        }
        int start = 0;
        int end = value.length();
        while (start < end && value.charAt(start) == ' ') {
            start++;
        }
        while (end > start && value.charAt(end - 1) == ' ') {
            end--;
        }
        if (start == end || end - start > MAX_DIGITS) {
            return OptionalLong.empty();
        }
        long ms = 0;
        for (int i = start; i < end; i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return OptionalLong.empty();
            }
            ms = ms * 10 + (c - '0');
        }
        return OptionalLong.of(ms);
    }

    /**
     * The reason of a {@value #NO_RETRY} header, when the header is present: its token (letters,
     * digits and {@code -}, up to 32, lower-cased), or {@code unspecified} for any other value.
     * Empty when {@code value} is null (no header).
     */
    public static Optional<String> noRetryReason(@Nullable String value) {
        if (value == null) {
            return Optional.empty();
        }
        String v = value.trim();
        if (v.isEmpty() || v.length() > MAX_REASON) {
            return Optional.of("unspecified");
        }
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-')) {
                return Optional.of("unspecified");
            }
        }
        return Optional.of(v.toLowerCase(Locale.ROOT));
    }

    /**
     * The {@value #NO_RETRY} reason for a retry that ended with {@code reason} without success:
     * {@code gave-up} (attempts exhausted, interrupted, cancelled), {@code not-retryable},
     * {@code deadline}, {@code budget}, {@code circuit-open}, {@code throttled}, {@code bulkhead-full}.
     *
     * @throws IllegalArgumentException for {@link EndReason#SUCCESS} and {@link EndReason#RECOVERED}
     */
    public static String noRetryToken(EndReason reason) {
        return switch (reason) {
            case EXHAUSTED, INTERRUPTED, CANCELLED -> "gave-up";
            case NOT_RETRYABLE -> "not-retryable";
            case DEADLINE -> "deadline";
            case BUDGET -> "budget";
            case CIRCUIT_OPEN -> "circuit-open";
            case THROTTLED -> "throttled";
            case BULKHEAD_FULL -> "bulkhead-full";
            case SUCCESS, RECOVERED -> throw new IllegalArgumentException(
                    "reason must be an end without success, got " + reason);
        };
    }
}
