package dev.stagger.grpc;

import dev.stagger.CircuitBreaker;
import dev.stagger.http.StatusTable.Rule;
import dev.stagger.internal.Checks;
import io.grpc.Status;
import java.util.Arrays;

/**
 * Which gRPC status codes {@link RetryingClientInterceptor} retries, and for which methods.
 * Immutable; the {@code with...} methods return new tables. The rules are those of
 * {@link dev.stagger.http.StatusTable} ({@link Rule}), read for gRPC's codes.
 *
 * <p>The default table follows gRPC's own guidance: the status code documentation
 * (<a href="https://grpc.io/docs/guides/status-codes/">grpc.io/docs/guides/status-codes</a>,
 * "use UNAVAILABLE if the client can retry just the failing call; ABORTED if the client should
 * retry at a higher level; FAILED_PRECONDITION if the client should not retry until the system
 * state has been explicitly fixed") and gRFC A6, client retries
 * (<a href="https://github.com/grpc/proposal/blob/master/A6-client-retries.md">A6-client-retries.md</a>),
 * whose retry policies name the codes a service owner declares retryable, UNAVAILABLE in its examples.
 * <ul>
 *   <li>{@link Rule#RETRY} — {@code UNAVAILABLE}: the service could not be reached or turned the
 *       call away before doing its work (a connection refused or reset, a server shutting down,
 *       a proxy with no healthy backend), so any method may be called again. The status code
 *       documentation adds that this is not always safe for a non-idempotent method: a server or
 *       proxy that answers UNAVAILABLE after it began the work breaks the rule. For such a
 *       service, move it to {@link #withRetryIfIdempotent}.
 *   <li>{@link Rule#RETRY_IF_IDEMPOTENT} — {@code DEADLINE_EXCEEDED} (the attempt's deadline
 *       passed; "the operation may have completed successfully"), {@code ABORTED} (a concurrency
 *       conflict: retry at the level of the read-modify-write), {@code RESOURCE_EXHAUSTED} (a quota
 *       or an overload: the work may have been admitted in part): retried only for methods safe to
 *       call again ({@link io.grpc.MethodDescriptor#isIdempotent()} or
 *       {@link io.grpc.MethodDescriptor#isSafe()}, set from the proto's {@code idempotency_level},
 *       or as {@link RetryingClientInterceptor.Builder#safeToRepeat} says).
 *   <li>{@link Rule#NEVER} — everything else: {@code INVALID_ARGUMENT}, {@code NOT_FOUND},
 *       {@code ALREADY_EXISTS}, {@code PERMISSION_DENIED}, {@code UNAUTHENTICATED},
 *       {@code FAILED_PRECONDITION}, {@code OUT_OF_RANGE}, {@code UNIMPLEMENTED} describe the call,
 *       which would get the same answer again; {@code DATA_LOSS}, {@code INTERNAL} and
 *       {@code UNKNOWN} report a fault a retry does not fix (and that may have happened after the
 *       work was done); {@code CANCELLED} means someone stopped the call. {@code OK} is a success.
 * </ul>
 */
public final class GrpcStatusTable {
    private static final int CODES = Status.Code.values().length;

    private static final GrpcStatusTable DEFAULTS = none()
            .withRetry(Status.Code.UNAVAILABLE)
            .withRetryIfIdempotent(Status.Code.DEADLINE_EXCEEDED, Status.Code.ABORTED, Status.Code.RESOURCE_EXHAUSTED);

    private final Rule[] rules; // index: Status.Code.value()

    private GrpcStatusTable(Rule[] rules) {
        this.rules = rules;
    }

    /** The default table described in the class comment. */
    public static GrpcStatusTable defaults() {
        return DEFAULTS;
    }

    /** A table that retries no code at all. */
    public static GrpcStatusTable none() {
        Rule[] never = new Rule[CODES];
        Arrays.fill(never, Rule.NEVER);
        return new GrpcStatusTable(never);
    }

    /**
     * This table with {@code codes} retried for every method, even one that is not safe to call
     * twice: use it only for codes that show the call was not processed.
     */
    public GrpcStatusTable withRetry(Status.Code... codes) {
        return with(Rule.RETRY, codes);
    }

    /** This table with {@code codes} retried only for methods safe to call again. */
    public GrpcStatusTable withRetryIfIdempotent(Status.Code... codes) {
        return with(Rule.RETRY_IF_IDEMPOTENT, codes);
    }

    /** This table with {@code codes} never retried. */
    public GrpcStatusTable withNever(Status.Code... codes) {
        return with(Rule.NEVER, codes);
    }

    /** The rule for {@code code}. */
    public Rule rule(Status.Code code) {
        return rules[Checks.notNull("code", code).value()];
    }

    /** True when a call that ended with {@code code} is retried for a method that is ({@code safe}) or is not safe to call again. */
    public boolean retries(Status.Code code, boolean safe) {
        Rule r = rule(code);
        return r == Rule.RETRY || (r == Rule.RETRY_IF_IDEMPOTENT && safe);
    }

    /**
     * What a {@link CircuitBreaker} (and an {@link dev.stagger.AdaptiveThrottle}) should count as a
     * failure of the downstream ({@code CircuitBreaker.builder(..).failurePredicate(table.failures())}):
     * an exception that carries no gRPC status, and a status this table retries for a safe method.
     * A {@code NOT_FOUND} or {@code INVALID_ARGUMENT} is the service answering, healthy; a breaker's
     * default would count it as a failure, since every non-OK status reaches it as an exception.
     */
    public CircuitBreaker.FailurePredicate failures() {
        return (result, failure) -> {
            if (failure == null) {
                return false;
            }
            Status status = Status.fromThrowable(failure);
            return status.getCode() == Status.Code.UNKNOWN && status.getCause() == failure
                    || retries(status.getCode(), true);
        };
    }

    private GrpcStatusTable with(Rule rule, Status.Code... codes) {
        Rule[] copy = rules.clone();
        for (Status.Code c : Checks.notNull("codes", codes)) {
            if (Checks.notNull("code", c) == Status.Code.OK && rule != Rule.NEVER) {
                throw new IllegalArgumentException("code must be an error to be retried, got OK");
            }
            copy[c.value()] = rule;
        }
        return new GrpcStatusTable(copy);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GrpcStatusTable t && Arrays.equals(rules, t.rules);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(rules);
    }

    @Override
    public String toString() {
        StringBuilder retry = new StringBuilder();
        StringBuilder ifIdempotent = new StringBuilder();
        for (Status.Code c : Status.Code.values()) {
            Rule r = rules[c.value()];
            if (r == Rule.RETRY) {
                retry.append(retry.length() == 0 ? "" : ",").append(c);
            } else if (r == Rule.RETRY_IF_IDEMPOTENT) {
                ifIdempotent.append(ifIdempotent.length() == 0 ? "" : ",").append(c);
            }
        }
        return "GrpcStatusTable{retry=[" + retry + "], retryIfIdempotent=[" + ifIdempotent + "]}";
    }
}
