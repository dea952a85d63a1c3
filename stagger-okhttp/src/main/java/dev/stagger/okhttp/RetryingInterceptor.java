package dev.stagger.okhttp;

import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.internal.BlockingFailures;
import dev.stagger.http.internal.CancellableAttempts;
import dev.stagger.http.StaggerHeaders;
import dev.stagger.okhttp.internal.ImmediateRetryGuard;
import dev.stagger.okhttp.internal.OkHttpTransport;
import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * An OkHttp application interceptor that sends each call's attempts through
 * {@link RetryingHttpClient#execute}, so an OkHttp call is retried, delayed, keyed and released by
 * exactly the rules {@link RetryingHttpClient#send} applies to a {@code java.net.http} request: the
 * status table, {@code Retry-After}, one {@code Idempotency-Key} on every attempt of a POST or PATCH,
 * the keys-honoured rule, the breaker, the budget, the throttle, the attempt and deadline headers,
 * and the events.
 *
 * <pre>{@code
 * RetryingHttpClient rules = RetryingHttpClient.builder().service("orders").build();
 * OkHttpClient ok = RetryingInterceptor.of(rules).applyTo(new OkHttpClient.Builder()).build();
 * }</pre>
 *
 * <h2>One retrying layer</h2>
 * OkHttp retries some connection failures by itself ({@code retryOnConnectionFailure}, on by
 * default), POSTs included. For the calls this interceptor sees it is switched off
 * ({@link Interceptor.Chain#withRetryOnConnectionFailure}), so each failure is retried by one
 * layer, under one budget and one deadline: a stale pooled connection surfaces as an
 * {@link IOException} that these rules retry when the request is safe to send twice, and a refused
 * connection as a {@link java.net.ConnectException}, which they always retry. OkHttp also resends
 * at once a 503 that carries {@code Retry-After: 0}; {@link #applyTo} adds a network interceptor
 * that removes that header from a 503 (the rules read a zero hint as no hint), so the 503 reaches
 * these rules instead. A client given only {@link OkHttpClient.Builder#addInterceptor} keeps that
 * second layer: use {@link #applyTo}.
 *
 * <h2>Where it sits</h2>
 * Add it as an application interceptor ({@link OkHttpClient.Builder#addInterceptor}), after the
 * interceptors that should run once per call and before those that should run once per attempt
 * (signing, tracing): each attempt runs the rest of the chain again. A network interceptor would
 * see redirects and auth follow-ups as attempts, so it is not supported. The request body is sent
 * again on each attempt, so it must be repeatable (OkHttp's bodies are, unless
 * {@code isOneShot()}): a one-shot body is sent once, without retries.
 *
 * <h2>Bodies</h2>
 * A response that is retried or refused is closed before the wait (OkHttp drains a short body so
 * its connection returns to the pool); the response returned is the caller's to close.
 *
 * <h2>Hedged requests</h2>
 * When the rules' policy hedges, the requests {@link RetryingHttpClient#send} would hedge (GET,
 * HEAD, OPTIONS, TRACE; PUT and DELETE when the rules allow it; POST and PATCH carrying an
 * {@code Idempotency-Key}, the same on every attempt, to a server that honours keys) are hedged
 * here too. An application interceptor's chain carries one exchange at a time, so each attempt of a
 * hedged call is sent as a call of its own on the same client ({@link Call#clone()}), which this
 * interceptor recognises and sends as it is, without applying the rules again. The first acceptable
 * answer wins; a losing attempt's call is {@linkplain Call#cancel() cancelled}, which frees its
 * connection, and a response it still gets is closed. Application interceptors added before this
 * one run again for each attempt of a hedged call (they see the original request); cancelling the
 * caller's call does not reach attempts already sent.
 *
 * <p>Immutable and thread-safe.
 */
public final class RetryingInterceptor implements Interceptor {
    private final RetryingHttpClient rules;
    /** The attempts of hedged calls, each sent as a call of its own, by call, until this interceptor sees it. */
    private final Map<Call, Request> attempts = new ConcurrentHashMap<>();

    private RetryingInterceptor(RetryingHttpClient rules) {
        this.rules = rules;
    }

    /**
     * An interceptor applying {@code rules}: a client built with {@link RetryingHttpClient#builder()}
     * (no {@code java.net.http} client), holding the policy, breaker, budget, status table and key mode.
     */
    public static RetryingInterceptor of(RetryingHttpClient rules) {
        return new RetryingInterceptor(Objects.requireNonNull(rules, "rules"));
    }

    /**
     * Adds this interceptor to {@code builder} as an application interceptor, and a network
     * interceptor that keeps OkHttp from resending a 503 by itself (see the class comment); returns
     * the builder.
     */
    public OkHttpClient.Builder applyTo(OkHttpClient.Builder builder) {
        return Objects.requireNonNull(builder, "builder").addInterceptor(this).addNetworkInterceptor(ImmediateRetryGuard.INSTANCE);
    }

    /** The rules this interceptor applies. */
    public RetryingHttpClient rules() {
        return rules;
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
        Chain once = chain.withRetryOnConnectionFailure(false);
        Request hedgeAttempt = attempts.remove(chain.call());
        if (hedgeAttempt != null) {
            return once.proceed(hedgeAttempt); // one attempt of a hedged call: the rules run in the call that sent it
        }
        Request request = chain.request();
        okhttp3.RequestBody body = request.body();
        if (body != null && body.isOneShot()) {
            return once.proceed(request); // cannot be sent twice
        }
        RetryingHttpClient.Exchange exchange = rules.exchange(request.method(), request.url().uri(),
                name -> Optional.ofNullable(request.header(name)));
        Request keyed = exchange.idempotencyKeyHeader()
                .map(key -> request.newBuilder().header("Idempotency-Key", key).build())
                .orElse(request);
        boolean hedging = rules.policy().hedge().isPresent() && exchange.safe();
        try {
            return rules.execute(exchange, hedging ? OkHttpTransport.HEDGED : OkHttpTransport.INSTANCE, attempt -> {
                Request.Builder attemptRequest = keyed.newBuilder();
                StaggerHeaders.forAttempt(attempt, attemptRequest::header);
                return hedging ? sendAlone(chain.call(), attemptRequest.build()) : once.proceed(attemptRequest.build());
            });
        } catch (Exception e) {
            throw BlockingFailures.asIOException(e);
        }
    }

    /**
     * Sends one attempt of a hedged call as a call of its own on the same client (a clone of
     * {@code call}), so that two attempts can be in flight at once and a losing one is cancelled
     * ({@link Call#cancel}) without touching the caller's call. This interceptor sends the clone's
     * request as {@code attempt} and applies no rules to it: one retrying layer.
     */
    private Response sendAlone(Call call, Request attempt) throws Exception {
        Call alone = call.clone();
        attempts.put(alone, attempt);
        try {
            return CancellableAttempts.run(alone::execute, alone::cancel, OkHttpTransport.INSTANCE::discard);
        } finally {
            attempts.remove(alone); // when the clone failed before reaching this interceptor
        }
    }

    @Override
    public String toString() {
        return "RetryingInterceptor{" + rules.service() + "}";
    }
}
