package dev.stagger.grpc;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.grpc.internal.GrpcClassifier;
import dev.stagger.grpc.internal.RetryingCall;
import dev.stagger.grpc.internal.ServiceConfigRetry;
import dev.stagger.internal.Checks;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A grpc-java {@link ClientInterceptor} that retries calls with a Stagger {@link Retry}: its policy
 * (attempts, backoff, deadline, attempt timeout, hedging), budget, breaker, throttle, listeners and
 * nesting. Whether an attempt is retried is decided by the {@link RetryPolicy}'s engine with this
 * interceptor's classifier in place of the policy's own: the {@link GrpcStatusTable} for the code,
 * whether the method is safe to call again, and the server's pushback.
 * <pre>{@code
 * Retry retry = Retry.of("inventory", RetryPolicy.interactive()).withCircuitBreaker(breaker);
 * ManagedChannel channel = ManagedChannelBuilder.forTarget("dns:///inventory:443")
 *         .intercept(RetryingClientInterceptor.builder(retry).build())
 *         .build();
 * }</pre>
 *
 * <h2>What is retried</h2>
 * A call that ends with a status the table retries: {@code UNAVAILABLE} for every method,
 * {@code DEADLINE_EXCEEDED}, {@code ABORTED} and {@code RESOURCE_EXHAUSTED} only for a method safe
 * to call again ({@link Builder#safeToRepeat}, by default {@link MethodDescriptor#isIdempotent()}
 * or {@link MethodDescriptor#isSafe()}), nothing else. See {@link GrpcStatusTable}.
 *
 * <h2>Pushback</h2>
 * A retryable status whose trailers carry {@code grpc-retry-pushback-ms} (gRFC A6) is retried after
 * at least that many milliseconds, with the backoff's jitter on top (Stagger's rule for server
 * hints, {@link dev.stagger.Decision}; A6 waits exactly the value); a negative or malformed value
 * ends the call (A6: "do not retry"). A wait past the deadline ends the call at once.
 *
 * <h2>Deadline and attempt</h2>
 * The call's deadline ({@link CallOptions#getDeadline()} or the {@link Context}'s, whichever is
 * earlier) bounds the whole retry, as the policy's own deadline does, and each attempt is sent with
 * the remaining time ({@link dev.stagger.AttemptContext#attemptTimeout()}: the policy's attempt
 * timeout shortened to what is left), so the server sees the deadline shrink from one attempt to
 * the next ({@code grpc-timeout} carries it). Each retry and hedge carries
 * {@code grpc-previous-rpc-attempts} (the number of attempts before it, A6) and every attempt
 * Stagger's {@code stagger-attempt} and, with a deadline, {@code stagger-deadline-ms}
 * ({@link dev.stagger.http.StaggerHeaders}).
 *
 * <h2>Kinds of call</h2>
 * <ul>
 *   <li>Unary: retried and hedged. The response is held until the attempt's status is known.
 *   <li>Server streaming: retried until the first response message arrives. From then on the call
 *       is committed (gRFC A6's word): messages go to the application as they come, and a failure
 *       after them ends the call without a retry (the application has seen part of the stream). A6
 *       commits a little earlier, on the response headers; this interceptor holds the headers until
 *       the first message or the status. Not hedged.
 *   <li>Client and bidirectional streaming: not retried, passed to the channel as they are (their
 *       requests would have to be buffered without bound). Use gRPC's retry, with its buffer limits,
 *       for those methods, or retry the whole exchange around the stub.
 * </ul>
 *
 * <h2>Hedging</h2>
 * When the retry's policy hedges ({@link RetryPolicy.Builder#hedge}), unary calls of methods safe to
 * call again are hedged: a second attempt is sent while the first is slow, the first accepted answer
 * wins and the other attempt is cancelled (its call gets {@code CANCELLED}). Hedges are attempts: they
 * spend the budget and ask the breaker and the throttle (gRPC's rule too). Other calls run their
 * attempts one after another.
 *
 * <h2>Outcome</h2>
 * The application sees one call: the accepted attempt's headers, messages and status, or the last
 * attempt's status when the retry gave up. When the breaker, the budget or the throttle refuses an
 * attempt, the call ends with the last attempt's code (or {@code UNAVAILABLE} when none was made)
 * described by the refusal, whose {@link dev.stagger.RetryRefusedException} (naming the reason) is the
 * status's cause. The breaker sees every non-OK attempt as a failure unless it is built with
 * {@link GrpcStatusTable#failures()}; the throttle counts as rejected only the statuses the table
 * retries (and failures without a status).
 *
 * <h2>Inside another retry</h2>
 * A blocking stub called inside a Stagger retry on the same thread follows the one-layer rule: a
 * failure this interceptor retried to the end (or judged not retryable) is not retried again by the
 * retry around it ({@link dev.stagger.Nesting#DEFER}), and the outer retry's deadline bounds this one.
 *
 * <h2>gRPC's own retry</h2>
 * grpc-java retries on its own when the channel's service config has a {@code retryPolicy} or a
 * {@code hedgingPolicy} for a method. Both layers retrying one failure multiplies the attempts.
 * Give the interceptor the service config the channel is built with
 * ({@link Builder#channelServiceConfig}) and it reports each such method as an
 * {@link OwnRetryWarning} when built. A config that the name resolver supplies at run time (DNS TXT
 * records, xDS) cannot be seen from an interceptor: build such channels with
 * {@code disableRetry()} when this interceptor retries their calls.
 *
 * <p>Immutable and thread-safe; one interceptor serves every call of a channel.
 */
public final class RetryingClientInterceptor implements ClientInterceptor {
    private static final System.Logger LOG = System.getLogger(RetryingClientInterceptor.class.getName());

    private final Retry retry;
    private final GrpcStatusTable statuses;
    private final Predicate<MethodDescriptor<?, ?>> safeToRepeat;
    private final List<OwnRetryWarning> warnings;

    private RetryingClientInterceptor(Builder b) {
        this.statuses = b.statuses;
        this.safeToRepeat = b.safeToRepeat;
        AdaptiveThrottle throttle = b.retry.throttle().orElse(null);
        CircuitBreaker.FailurePredicate rejected = b.statuses.failures();
        // the throttle counts an attempt as rejected by the server when the table would retry its status
        this.retry = throttle == null ? b.retry
                : b.retry.withThrottle(throttle.withAcceptedWhen(
                        (result, failure, decision) -> !rejected.isFailure(result, failure)));
        this.warnings = b.serviceConfig == null ? List.of()
                : ServiceConfigRetry.retried(b.serviceConfig).stream()
                        .map(e -> new OwnRetryWarning(e.method(), e.policy())).toList();
        for (OwnRetryWarning w : warnings) {
            b.onWarning.accept(w);
        }
    }

    /** An interceptor retrying calls with {@code retry}; see the class comment. */
    public static Builder builder(Retry retry) {
        return new Builder(Checks.notNull("retry", retry));
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                                                               CallOptions callOptions, Channel next) {
        MethodDescriptor.MethodType type = method.getType();
        if (type != MethodDescriptor.MethodType.UNARY && type != MethodDescriptor.MethodType.SERVER_STREAMING) {
            return next.newCall(method, callOptions); // not retried: see the class comment
        }
        boolean safe = safeToRepeat.test(method);
        Context context = Context.current();
        RetryPolicy.Builder policy = retry.policy().toBuilder().classifier(new GrpcClassifier(statuses, safe));
        if (!safe || type != MethodDescriptor.MethodType.UNARY) {
            policy.withoutHedge();
        }
        Duration callDeadline = remaining(callOptions.getDeadline(), context.getDeadline());
        if (callDeadline != null) {
            Optional<Duration> own = retry.policy().deadline();
            if (own.isEmpty() || callDeadline.compareTo(own.get()) < 0) {
                policy.deadline(callDeadline);
            }
        }
        return new RetryingCall<>(retry.withPolicy(policy.build()), method, callOptions, next, context,
                type == MethodDescriptor.MethodType.SERVER_STREAMING);
    }

    /** The time left before the earlier of two gRPC deadlines (at least 1 ns), or null with neither. */
    private static @Nullable Duration remaining(@Nullable Deadline a, @Nullable Deadline b) {
        Deadline d = a == null ? b : b == null ? a : a.minimum(b);
        return d == null ? null : Duration.ofNanos(Math.max(1, d.timeRemaining(TimeUnit.NANOSECONDS)));
    }

    /** The retry whose policy, guards and listeners every call uses. */
    public Retry retry() {
        return retry;
    }

    public GrpcStatusTable statusTable() {
        return statuses;
    }

    /** What the service config given to the builder configures twice; empty when none was given. */
    public List<OwnRetryWarning> warnings() {
        return warnings;
    }

    @Override
    public String toString() {
        return "RetryingClientInterceptor{" + retry + ", " + statuses + "}";
    }

    /** Builds a {@link RetryingClientInterceptor}. Not thread-safe. */
    public static final class Builder {
        private final Retry retry;
        private GrpcStatusTable statuses = GrpcStatusTable.defaults();
        private Predicate<MethodDescriptor<?, ?>> safeToRepeat = m -> m.isIdempotent() || m.isSafe();
        private @Nullable Map<String, ?> serviceConfig;
        private Consumer<OwnRetryWarning> onWarning =
                w -> LOG.log(System.Logger.Level.WARNING, w.message());

        private Builder(Retry retry) {
            this.retry = retry;
        }

        /** Which codes are retried, and for which methods; default {@link GrpcStatusTable#defaults()}. */
        public Builder statusTable(GrpcStatusTable statuses) {
            this.statuses = Checks.notNull("statusTable", statuses);
            return this;
        }

        /**
         * Which methods are safe to call again (and to hedge), for the table's
         * {@link dev.stagger.http.StatusTable.Rule#RETRY_IF_IDEMPOTENT} codes. Default: a method whose
         * descriptor says it is idempotent or safe (the proto's {@code idempotency_level}).
         */
        public Builder safeToRepeat(Predicate<MethodDescriptor<?, ?>> safeToRepeat) {
            this.safeToRepeat = Checks.notNull("safeToRepeat", safeToRepeat);
            return this;
        }

        /**
         * The service config the channel is built with (the map given to
         * {@code ManagedChannelBuilder.defaultServiceConfig}): every method it gives gRPC's own
         * {@code retryPolicy} or {@code hedgingPolicy} is reported as an {@link OwnRetryWarning}
         * when the interceptor is built.
         */
        public Builder channelServiceConfig(Map<String, ?> serviceConfig) {
            this.serviceConfig = Map.copyOf(Checks.notNull("serviceConfig", serviceConfig));
            return this;
        }

        /**
         * Receives the {@link OwnRetryWarning}s found when the interceptor is built. Default: a
         * WARNING through {@link System.Logger} (the platform's logging, which SLF4J and Log4j can
         * receive), so the warning is seen without configuration.
         */
        public Builder onWarning(Consumer<OwnRetryWarning> onWarning) {
            this.onWarning = Checks.notNull("onWarning", onWarning);
            return this;
        }

        public RetryingClientInterceptor build() {
            return new RetryingClientInterceptor(this);
        }
    }
}
