package dev.stagger.httpclient5;

import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.internal.BlockingFailures;
import dev.stagger.http.internal.CancellableAttempts;
import dev.stagger.http.StaggerHeaders;
import dev.stagger.httpclient5.internal.ApacheTransports;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.core5.concurrent.ComplexCancellable;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.ProtocolException;
import org.apache.hc.core5.http.io.support.ClassicRequestBuilder;

/**
 * An exec-chain handler for Apache HttpClient 5's classic (blocking) client that sends each
 * request's attempts through {@link RetryingHttpClient#execute}: the status table,
 * {@code Retry-After}, one {@code Idempotency-Key} on every attempt of a POST or PATCH, the
 * keys-honoured rule, the breaker, the budget, the throttle, the attempt and deadline headers and the
 * events are those {@link RetryingHttpClient#send} applies.
 *
 * <pre>{@code
 * RetryingHttpClient rules = RetryingHttpClient.builder().service("orders").build();
 * CloseableHttpClient apache = RetryingExecChainHandler.of(rules).applyTo(HttpClients.custom()).build();
 * }</pre>
 *
 * <h2>One retrying layer</h2>
 * HttpClient retries by itself ({@code DefaultHttpRequestRetryStrategy}: once on some I/O errors,
 * and 429 and 503 with {@code Retry-After}), without a budget or a deadline.
 * {@link #applyTo(HttpClientBuilder)} calls {@link HttpClientBuilder#disableAutomaticRetries()}, so
 * each failure is retried by one layer; a client built without it would multiply attempts.
 *
 * <h2>Where it sits</h2>
 * First in the chain, so redirects and authentication follow-ups happen inside one attempt. Each
 * attempt sends a copy of the request with the attempt headers set, so the entity must be
 * repeatable (byte arrays and strings are): a request whose entity is not is sent once, without
 * retries.
 *
 * <h2>Hedged requests</h2>
 * When the rules' policy hedges, the requests {@link RetryingHttpClient#send} would hedge (GET,
 * HEAD, OPTIONS, TRACE; PUT and DELETE when the rules allow it; POST and PATCH carrying an
 * {@code Idempotency-Key}, the same on every attempt, to a server that honours keys) are hedged
 * here too: each attempt runs the rest of the chain on an execution runtime of its own
 * ({@code ExecRuntime.fork}) and a context of its own sharing the call's configuration, cookie
 * store and credentials. The first acceptable answer wins; a losing attempt is cancelled, which
 * aborts its connection, and a response it still gets is consumed and closed.
 *
 * <h2>Bodies</h2>
 * A response that is retried or refused is consumed and closed before the wait, so its connection
 * returns to the pool; the response returned is the caller's to consume or close.
 *
 * <p>Immutable and thread-safe.
 */
public final class RetryingExecChainHandler implements ExecChainHandler {
    /** The handler's name in the exec chain. */
    public static final String NAME = "stagger-retry";

    private final RetryingHttpClient rules;

    private RetryingExecChainHandler(RetryingHttpClient rules) {
        this.rules = rules;
    }

    /**
     * A handler applying {@code rules}: a client built with {@link RetryingHttpClient#builder()}
     * (no {@code java.net.http} client), holding the policy, breaker, budget, status table and key mode.
     */
    public static RetryingExecChainHandler of(RetryingHttpClient rules) {
        return new RetryingExecChainHandler(Objects.requireNonNull(rules, "rules"));
    }

    /**
     * Switches {@code builder}'s own retries off and adds this handler first in its chain; returns
     * the builder.
     */
    public HttpClientBuilder applyTo(HttpClientBuilder builder) {
        return Objects.requireNonNull(builder, "builder").disableAutomaticRetries().addExecInterceptorFirst(NAME, this);
    }

    /** The rules this handler applies. */
    public RetryingHttpClient rules() {
        return rules;
    }

    @Override
    public ClassicHttpResponse execute(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
            throws IOException, HttpException {
        HttpEntity entity = request.getEntity();
        if (entity != null && !entity.isRepeatable()) {
            return chain.proceed(request, scope); // cannot be sent twice
        }
        RetryingHttpClient.Exchange exchange = rules.exchange(request.getMethod(), uri(request, scope),
                name -> ApacheTransports.firstHeader(request, name));
        exchange.idempotencyKeyHeader().ifPresent(key -> request.setHeader("Idempotency-Key", key));
        boolean hedging = rules.policy().hedge().isPresent() && exchange.safe();
        try {
            return rules.execute(exchange, hedging ? ApacheTransports.CLASSIC_HEDGED : ApacheTransports.CLASSIC, attempt -> {
                ClassicHttpRequest copy = ClassicRequestBuilder.copy(request).build();
                StaggerHeaders.forAttempt(attempt, copy::setHeader);
                return hedging ? proceedAlone(copy, scope, chain) : chain.proceed(copy, scope);
            });
        } catch (HttpException e) {
            throw e;
        } catch (Exception e) {
            throw BlockingFailures.asIOException(e);
        }
    }

    /**
     * Sends one attempt of a hedged call on an execution runtime and a context of its own, so that
     * two attempts can be in flight at once; a losing attempt is cancelled through its runtime's
     * cancellable, which aborts its connection, and a response it still gets is released.
     */
    private static ClassicHttpResponse proceedAlone(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
            throws Exception {
        ComplexCancellable cancellable = new ComplexCancellable();
        ExecChain.Scope alone = new ExecChain.Scope(scope.exchangeId, scope.route, scope.originalRequest,
                scope.execRuntime.fork(cancellable), ApacheTransports.attemptContext(scope.clientContext));
        return CancellableAttempts.run(() -> chain.proceed(request, alone), cancellable::cancel,
                ApacheTransports.CLASSIC::discard);
    }

    private static URI uri(ClassicHttpRequest request, ExecChain.Scope scope) throws ProtocolException {
        try {
            URI uri = request.getUri();
            return uri.isAbsolute() ? uri : URI.create(scope.route.getTargetHost().toURI()).resolve(uri);
        } catch (URISyntaxException e) {
            throw new ProtocolException("request URI: " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "RetryingExecChainHandler{" + rules.service() + "}";
    }
}
