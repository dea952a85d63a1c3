package dev.stagger.http;

import dev.stagger.AttemptCallable;
import dev.stagger.AttemptContext;
import dev.stagger.AdaptiveThrottle;
import dev.stagger.CircuitBreaker;
import dev.stagger.Clock;
import dev.stagger.Fallback;
import dev.stagger.HedgePolicy;
import dev.stagger.RandomSource;
import dev.stagger.RetryBudget;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.Checks;
import dev.stagger.http.internal.ClientRetries;
import dev.stagger.http.internal.HttpCall;
import dev.stagger.http.internal.RequestRules;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A {@link HttpClient} wrapper that retries what is safe to retry, and nothing else.
 *
 * <h2>Safe to send again</h2>
 * A request is <em>safe</em> when sending it twice does no harm: its method is idempotent (GET,
 * HEAD, PUT, DELETE, OPTIONS, TRACE), or it carries an {@code Idempotency-Key} and the server is
 * declared to honour keys ({@link Builder#keysHonoured}). A key alone does not make a request
 * safe: a server that ignores it processes a repeat as a new request.
 *
 * <h2>What is retried</h2>
 * <ul>
 *   <li>Failures that never reached the server — {@link java.net.ConnectException} and
 *       {@link java.net.http.HttpConnectTimeoutException} — always: nothing was sent.
 *   <li>Statuses that show the request was not processed — by default 408, 429 and 503 (rule
 *       {@link StatusTable.Rule#RETRY}) — for every request, safe or not (except an unkeyed
 *       non-idempotent request under {@link IdempotencyKeyMode#REQUIRE}, which is sent once).
 *       The caveat: this is only as true as the server's use of the status; a gateway that
 *       answers 503 after it forwarded the request (a router timing out on a slow application)
 *       breaks it. Move such a status to {@link StatusTable#withRetryIfIdempotent} for that service.
 *   <li>Outcomes that leave open whether the request was processed — by default 409, 500, 502 and
 *       504 (rule {@link StatusTable.Rule#RETRY_IF_IDEMPOTENT}), a request timeout
 *       ({@link java.net.http.HttpTimeoutException}), a reset or EOF after sending (any other
 *       {@link IOException}) — only for safe requests.
 *   <li>Nothing else (400, 401, 403, 404, 422 and every other status), and no response that
 *       carries {@value StaggerHeaders#NO_RETRY} from a server the client trusts
 *       ({@link Builder#signalsTrusted}): a Stagger server sends it when its answer is already the
 *       result of a retry that gave up, or of a breaker, budget, throttle or shedding refusal.
 * </ul>
 *
 * <h2>Headers sent</h2>
 * Every attempt carries {@value StaggerHeaders#ATTEMPT} (the attempt number) and, when the
 * attempt has a deadline ({@link AttemptContext#remaining()}: the policy's, or an enclosing
 * retry's or request scope's, whichever ends first), {@value StaggerHeaders#DEADLINE} with the
 * milliseconds left, which a Stagger server makes the bound of its own work. See
 * {@link StaggerHeaders}.
 *
 * <h2>Idempotency keys</h2>
 * In {@link IdempotencyKeyMode#AUTO} (the default) each POST and PATCH without a key gets one
 * UUID v4, sent as {@code Idempotency-Key: "<uuid>"} on every attempt of that call, so a server
 * that honours keys executes it once however often it is retried. A caller-supplied key is kept.
 * Whether the key makes the request safe depends on {@link Builder#keysHonoured}.
 *
 * <h2>Retry-After</h2>
 * On a retried status, {@code Retry-After} (delta-seconds or HTTP-date) is the minimum wait; the
 * backoff's jitter is added on top so clients told the same second do not return in lockstep.
 * Negative or unparseable values are ignored; values beyond {@link Builder#maxRetryAfter} (default
 * 5 min) are clamped to it. A hint longer than the remaining deadline ends the call at once.
 *
 * <h2>Outcome</h2>
 * The response of the last attempt is returned whether it is a success, a non-retryable status or
 * a retryable status the client gave up on (attempts exhausted or deadline reached): check
 * {@link HttpResponse#statusCode()} (and {@link #retries(HttpResponse)} to tell the two apart).
 * If the thread is interrupted during a wait, the last response is returned with the interrupt
 * status set (its streamed body already released). When every attempt threw, the last exception is thrown with
 * the earlier ones suppressed. A refusal by the breaker, the budget or the throttle throws a
 * {@link dev.stagger.RetryRefusedException} subtype. Bodies of responses that are retried or
 * refused are drained and closed before waiting, so streamed bodies
 * ({@code BodyHandlers.ofInputStream()}, {@code ofLines()}, {@code ofPublisher()}) never leak a
 * connection; the returned response's body is the caller's to close.
 *
 * <h2>Hedged requests</h2>
 * When the policy hedges ({@link RetryPolicy.Builder#hedge(HedgePolicy)}), {@link #send} and
 * {@link #sendAsync} send a second attempt of a slow request while the first is still running and
 * return the first answer the rules above accept; the other attempt is cancelled and its response,
 * if one still arrives, has its body released (drained and closed, as a retried response's). Only
 * requests that are safe to have in flight twice at once are hedged:
 * <ul>
 *   <li>GET, HEAD, OPTIONS and TRACE, always;
 *   <li>PUT and DELETE only with {@link Builder#hedgeIdempotentWrites(boolean)}: they are
 *       idempotent, but two at once race (the DELETE that arrives second answers 404, and may
 *       answer first);
 *   <li>POST and PATCH only with an {@code Idempotency-Key} (the caller's or the generated one,
 *       the same on every attempt) to a server declared to honour keys ({@link Builder#keysHonoured});
 *   <li>nothing else: an unkeyed POST runs its attempts one after another, as without hedging.
 * </ul>
 * Each attempt is classified by the status table as a retry is: a status that is not retried (400,
 * say) from any attempt ends the call at once with that response, a retried one ends only its
 * attempt, and when every attempt of a round failed the client backs off (honouring
 * {@code Retry-After}) and tries again. Hedges spend the budget and ask the breaker and the
 * throttle as retries do. {@link #execute} and {@link #executeAsync} hedge by the same rules; a
 * losing attempt's response is released through the transport that {@link HttpTransport#owns owns} it.
 *
 * <h2>Stale if error</h2>
 * With {@link Builder#fallback(StaleResponseCache)}, a GET that fails on an error (breaker open,
 * budget, deadline or attempts exhausted, with an exception or a 500, 502, 503 or 504) is answered
 * with its last good response, marked with {@code Age} and {@value StaleResponseCache#STALE_HEADER}
 * (RFC 5861 {@code stale-if-error}; the response's own {@code Cache-Control} decides for how long).
 *
 * <h2>Observing</h2>
 * {@link Builder#httpListener(HttpRetryListener)} receives one {@link HttpRetryEvent} per scheduled retry (the
 * fields of the {@code http_retry} log line); {@link Builder#listener(dev.stagger.RetryListener)}
 * receives the core events of every call, for metrics.
 *
 * <h2>Timeouts</h2>
 * Each attempt's request timeout is the engine's {@link dev.stagger.AttemptContext#attemptTimeout()}:
 * the policy's {@code attemptTimeout} shortened to the time left before the deadline (and never
 * longer than the request's own timeout), for {@link #send} and {@link #sendAsync} alike.
 *
 * <h2>Other transports</h2>
 * The same rules serve requests sent by another HTTP stack (Spring's {@code RestClient} and
 * {@code WebClient} in the Spring Boot starter): build the client with {@link #builder()} (no
 * {@code HttpClient}), then for each logical request call {@link #exchange} once and
 * {@link #execute} or {@link #executeAsync} with an {@link HttpTransport} that reads that stack's
 * responses. The attempts, waits, keys, Retry-After, breaker, budget and events are the ones
 * {@link #send} would give.
 *
 * <p>The policy's own classifier is not used: this client classifies by the rules above. Immutable
 * and thread-safe.
 */
public final class RetryingHttpClient {
    /**
     * {@value}: the attempt number (1 on the first attempt, 2, 3, ... on retries), sent on every
     * attempt so a server can tell retries from first attempts (a load-shedding filter sheds
     * retries first). Transports given to {@link #execute} set it from
     * {@link AttemptContext#attempt()}.
     */
    public static final String ATTEMPT_HEADER = StaggerHeaders.ATTEMPT;

    private final @Nullable HttpClient client;
    private final RetryPolicy policy;
    private final @Nullable CircuitBreaker breaker;
    private final @Nullable RetryBudget budget;
    private final @Nullable AdaptiveThrottle throttle;
    private final Clock clock;
    private final RandomSource random;
    private final String service;
    private final StatusTable statuses;
    private final IdempotencyKeyMode keyMode;
    private final Duration maxRetryAfter;
    private final Predicate<URI> keysHonoured;
    private final Predicate<URI> signalsTrusted;
    private final List<HttpRetryListener> listeners;
    private final List<RetryListener> retryListeners;
    private final Function<HttpRequest, String> operationName;
    private final @Nullable StaleResponseCache staleCache;
    private final boolean hedgeIdempotentWrites;
    private final RequestRules rules;
    private final ClientRetries retries;

    private RetryingHttpClient(Builder b) {
        this.client = b.client;
        this.policy = b.policy;
        this.breaker = b.breaker;
        // the default budget, per named client: the process's budget of the service's name (see RetryBudget.shared)
        this.budget = b.budget != null || b.withoutBudget ? b.budget
                : b.clock == Clock.system() ? RetryBudget.shared(b.service)
                : RetryBudget.builder(b.service).clock(b.clock).build();
        this.throttle = b.throttle;
        this.clock = b.clock;
        this.random = b.random;
        this.service = b.service;
        this.statuses = b.statuses;
        this.keyMode = b.keyMode;
        this.maxRetryAfter = b.maxRetryAfter;
        this.keysHonoured = b.keysHonoured;
        this.signalsTrusted = b.signalsTrusted;
        this.listeners = List.copyOf(b.listeners);
        this.retryListeners = List.copyOf(b.retryListeners);
        this.operationName = b.operationName;
        this.staleCache = b.staleCache;
        this.hedgeIdempotentWrites = b.hedgeIdempotentWrites;
        this.rules = new RequestRules(keyMode, keysHonoured, signalsTrusted, hedgeIdempotentWrites);
        this.retries = new ClientRetries(service, policy, clock, random, breaker, budget, throttle, retryListeners);
    }

    /** Starts a builder around {@code client}, which does the actual sending. */
    public static Builder builder(HttpClient client) {
        return new Builder(Objects.requireNonNull(client, "client"));
    }

    /**
     * Starts a builder for a client whose requests another transport sends, through
     * {@link #execute} and {@link #executeAsync}; {@link #send}, {@link #sendAsync} and
     * {@link #client()} of such a client throw {@link IllegalStateException}. Starts no thread.
     */
    public static Builder builder() {
        return new Builder(null);
    }

    /**
     * What this client decides about a request before its first attempt, for a request another
     * transport sends: the {@code Idempotency-Key} to attach (if any) and whether sending it twice
     * is safe. One per logical request; every attempt uses it.
     */
    public static final class Exchange {
        final String method;
        final URI uri;
        final @Nullable String generatedKey;
        final boolean safe;
        final boolean sendOnce;
        final boolean trustsSignals;
        final @Nullable String requestId;

        Exchange(String method, URI uri, @Nullable String generatedKey, boolean safe, boolean sendOnce,
                 boolean trustsSignals, @Nullable String requestId) {
            this.method = method;
            this.uri = uri;
            this.generatedKey = generatedKey;
            this.safe = safe;
            this.sendOnce = sendOnce;
            this.trustsSignals = trustsSignals;
            this.requestId = requestId;
        }

        /**
         * The {@code Idempotency-Key} header value the transport must add to every attempt (an RFC
         * 8941 string, quoted), when the client generated one.
         */
        public Optional<String> idempotencyKeyHeader() {
            return generatedKey == null ? Optional.empty() : Optional.of("\"" + generatedKey + "\"");
        }

        /** Whether sending the request twice does no harm (see the class comment). */
        public boolean safe() {
            return safe;
        }

        @Override
        public String toString() {
            return "Exchange{" + method + " " + uri + (generatedKey != null ? ", key" : "") + (safe ? ", safe" : "") + "}";
        }
    }

    /**
     * Plans one logical request that another transport sends.
     *
     * @param requestHeader the request's first value of a header, by name (case-insensitive)
     */
    public Exchange exchange(String method, URI uri, Function<String, Optional<String>> requestHeader) {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(requestHeader, "requestHeader");
        String m = RequestRules.method(method);
        String key = RequestRules.presentKey(requestHeader);
        String generated = key == null ? rules.newKey(m) : null;
        if (generated != null) {
            key = generated;
        }
        boolean keyed = key != null;
        String requestId = keyed ? key : requestHeader.apply("X-Request-Id").orElse(null);
        return new Exchange(m, uri, generated, rules.safe(m, keyed, uri), rules.sendsOnce(m, keyed),
                rules.trustsSignals(uri), requestId);
    }

    /**
     * Runs the attempts of {@code exchange} on the caller's thread: {@code attempt} sends the
     * request once through the other transport (adding {@link Exchange#idempotencyKeyHeader()}) and
     * returns its response. Returns, throws and releases as {@link #send} does.
     */
    public <R> R execute(Exchange exchange, HttpTransport<R> transport, AttemptCallable<R> attempt) throws Exception {
        Objects.requireNonNull(attempt, "attempt");
        return retries.forCall(foreignCall(exchange, transport), null, hedges(exchange, transport)).call(attempt);
    }

    /**
     * As {@link #execute}, without blocking: waits are scheduled on the clock's scheduler. A hedged
     * call cancels the future of a losing attempt, so the future should cancel its exchange.
     */
    public <R> CompletableFuture<R> executeAsync(Exchange exchange, HttpTransport<R> transport,
                                                 Function<? super AttemptContext, ? extends CompletionStage<R>> attempt) {
        Objects.requireNonNull(attempt, "attempt");
        return retries.forCall(foreignCall(exchange, transport), null, hedges(exchange, transport)).callAsync(attempt);
    }

    private HttpCall foreignCall(Exchange exchange, HttpTransport<?> transport) {
        Objects.requireNonNull(exchange, "exchange");
        Objects.requireNonNull(transport, "transport");
        return new HttpCall(null, exchange.method, exchange.uri, transport, exchange.safe, exchange.sendOnce,
                exchange.trustsSignals, exchange.requestId, service, operationName(exchange.method, exchange.uri),
                statuses, maxRetryAfter, clock, listeners);
    }

    /**
     * Sends {@code request}, retrying per the class comment, and returns the last attempt's
     * response.
     *
     * @throws IOException the last attempt's failure when every attempt threw (also when the thread
     *     was interrupted while waiting after it; the interrupt status is then set)
     * @throws InterruptedException when interrupted while sending; interrupted while waiting, the
     *     call ends at once with the last attempt's outcome instead (see the class comment)
     * @throws dev.stagger.RetryRefusedException when the breaker or budget refused an attempt
     */
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> bodyHandler)
            throws IOException, InterruptedException {
        Objects.requireNonNull(bodyHandler, "bodyHandler");
        HttpClient client = client();
        Exchange exchange = exchange(request);
        HttpCall call = newCall(request, exchange);
        try {
            HttpResponse<T> response = retries.forCall(call, staleFallback(request, bodyHandler), hedges(exchange))
                    .call(context -> client.send(call.attemptRequest(context), bodyHandler));
            if (staleCache != null) {
                staleCache.remember(request, response);
            }
            return response;
        } catch (IOException | InterruptedException | RuntimeException e) {
            throw e;
        } catch (Exception other) {
            throw new IOException(other); // HttpClient.send throws nothing else; kept for the compiler
        }
    }

    /**
     * As {@link #send}, without blocking: waits are scheduled on the clock's scheduler. Cancelling
     * the returned future stops further attempts.
     */
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request,
                                                            HttpResponse.BodyHandler<T> bodyHandler) {
        Objects.requireNonNull(bodyHandler, "bodyHandler");
        HttpClient client = client();
        Exchange exchange = exchange(request);
        HttpCall call = newCall(request, exchange);
        CompletableFuture<HttpResponse<T>> response = retries.forCall(call, staleFallback(request, bodyHandler), hedges(exchange)).callAsync(
                context -> client.sendAsync(call.attemptRequest(context), bodyHandler));
        if (staleCache == null) {
            return response;
        }
        return response.thenApply(r -> {
            staleCache.remember(request, r);
            return r;
        });
    }

    /**
     * Whether this client retries a response like {@code response}: its status under the status
     * table, for the request that produced it (method, key, key mode, whether the server honours
     * keys). On a response returned by {@link #send}, true means the client gave up on it
     * (attempts or deadline ran out).
     */
    public boolean retries(HttpResponse<?> response) {
        return verdict(response) == RetryVerdict.RETRYABLE;
    }

    /**
     * Whether this client retries a response like {@code response} and, when not, why: the
     * status itself, or a request that is not safe to send twice (a POST or PATCH without an
     * {@code Idempotency-Key}, or with one the server is not declared to honour) whose status
     * would be retried if it were.
     */
    public RetryVerdict verdict(HttpResponse<?> response) {
        Objects.requireNonNull(response, "response");
        return rules.verdict(statuses, response);
    }

    /**
     * The wrapped client.
     *
     * @throws IllegalStateException for a client built with {@link #builder()}, which has none
     */
    public HttpClient client() {
        if (client == null) {
            throw new IllegalStateException("this RetryingHttpClient was built without an HttpClient: "
                    + "send through another transport with execute(..)");
        }
        return client;
    }

    /** A builder holding this client's settings, to build a changed copy. */
    public Builder toBuilder() {
        Builder b = new Builder(client);
        b.policy = policy;
        b.breaker = breaker;
        b.budget = budget;
        b.withoutBudget = budget == null;
        b.throttle = throttle;
        b.clock = clock;
        b.random = random;
        b.service = service;
        b.statuses = statuses;
        b.keyMode = keyMode;
        b.maxRetryAfter = maxRetryAfter;
        b.keysHonoured = keysHonoured;
        b.signalsTrusted = signalsTrusted;
        b.listeners.addAll(listeners);
        b.retryListeners.addAll(retryListeners);
        b.operationName = operationName;
        b.staleCache = staleCache;
        b.hedgeIdempotentWrites = hedgeIdempotentWrites;
        return b;
    }

    /** The breaker guarding every attempt, if any. */
    public Optional<CircuitBreaker> circuitBreaker() {
        return Optional.ofNullable(breaker);
    }

    /** The stale-if-error cache serving failed GETs, if any. */
    public Optional<StaleResponseCache> fallback() {
        return Optional.ofNullable(staleCache);
    }

    /** The budget asked before every retry: the default one unless set; empty after {@link Builder#withoutBudget()}. */
    public Optional<RetryBudget> budget() {
        return Optional.ofNullable(budget);
    }

    /** The adaptive throttle asked before every attempt, if any. */
    public Optional<AdaptiveThrottle> throttle() {
        return Optional.ofNullable(throttle);
    }

    public RetryPolicy policy() {
        return policy;
    }

    public StatusTable statusTable() {
        return statuses;
    }

    public IdempotencyKeyMode idempotencyKeyMode() {
        return keyMode;
    }

    public boolean hedgesIdempotentWrites() {
        return hedgeIdempotentWrites;
    }

    public String service() {
        return service;
    }

    private Exchange exchange(HttpRequest request) {
        Objects.requireNonNull(request, "request");
        return exchange(request.method(), request.uri(), name -> request.headers().firstValue(name));
    }

    private HttpCall newCall(HttpRequest request, Exchange exchange) {
        HttpRequest toSend = exchange.generatedKey == null ? request
                : HttpRequest.newBuilder(request, (name, value) -> true)
                        .header(RequestRules.KEY_HEADER, exchange.idempotencyKeyHeader().orElseThrow())
                        .build();
        return new HttpCall(toSend, exchange.safe, exchange.sendOnce, exchange.trustsSignals, exchange.requestId, service,
                operationName.apply(request), statuses, maxRetryAfter, clock, listeners);
    }

    /** Whether a call of {@code exchange} is hedged: the policy hedges and two attempts in flight at once do no harm. */
    private boolean hedges(Exchange exchange) {
        return retries.hedges() && rules.hedgeable(exchange.method, exchange.safe);
    }

    /** As {@link #hedges(Exchange)}, for a call through {@code transport}, which then releases its late losers. */
    private boolean hedges(Exchange exchange, HttpTransport<?> transport) {
        return rules.hedgeable(exchange.method, exchange.safe) && retries.hedgesThrough(transport);
    }

    /** The stale-if-error fallback for a GET, when the client has a cache; else null. */
    private <T> @Nullable Fallback<HttpResponse<T>> staleFallback(HttpRequest request, HttpResponse.BodyHandler<T> bodyHandler) {
        return staleCache != null && "GET".equalsIgnoreCase(request.method())
                ? staleCache.fallbackFor(request, bodyHandler) : null;
    }

    static String defaultOperationName(HttpRequest request) {
        return operationName(request.method(), request.uri());
    }

    /** {@code GET /path}: the method and the URI's path ({@code /} for none). */
    private static String operationName(String method, URI uri) {
        String path = uri.getPath();
        return method + " " + (path == null || path.isEmpty() ? "/" : path);
    }

    @Override
    public String toString() {
        return "RetryingHttpClient{" + service + ", " + policy + ", " + statuses + ", keys=" + keyMode + "}";
    }

    /** Builds a {@link RetryingHttpClient}. Not thread-safe; {@link #build()} snapshots it. */
    public static final class Builder {
        private final @Nullable HttpClient client;
        private RetryPolicy policy = RetryPolicy.interactive();
        private @Nullable CircuitBreaker breaker;
        private @Nullable RetryBudget budget;
        private boolean withoutBudget;
        private @Nullable AdaptiveThrottle throttle;
        private Clock clock = Clock.system();
        private RandomSource random = RandomSource.threadLocal();
        private String service = "http";
        private StatusTable statuses = StatusTable.defaults();
        private IdempotencyKeyMode keyMode = IdempotencyKeyMode.AUTO;
        private Duration maxRetryAfter = Duration.ofMinutes(5);
        private Predicate<URI> keysHonoured = uri -> false;
        private Predicate<URI> signalsTrusted = uri -> true;
        private final List<HttpRetryListener> listeners = new ArrayList<>();
        private final List<RetryListener> retryListeners = new ArrayList<>();
        private Function<HttpRequest, String> operationName = RetryingHttpClient::defaultOperationName;
        private @Nullable StaleResponseCache staleCache;
        private boolean hedgeIdempotentWrites;

        private Builder(@Nullable HttpClient client) {
            this.client = client;
        }

        /** Attempts, backoff, deadline and per-attempt timeout. Default {@link RetryPolicy#interactive()}. */
        public Builder policy(RetryPolicy policy) {
            this.policy = Checks.notNull("policy", policy);
            return this;
        }

        /** Checked before every attempt; once open, the call stops retrying. */
        public Builder circuitBreaker(CircuitBreaker breaker) {
            this.breaker = Checks.notNull("circuitBreaker", breaker);
            return this;
        }

        /**
         * Asked before every retry; share one budget among all clients of one downstream. Without
         * one, the client has the default budget: {@link RetryBudget#shared(String)} of its
         * {@link #service} name (on another clock than the system's, a budget of its own with the
         * same defaults).
         */
        public Builder budget(RetryBudget budget) {
            this.budget = Checks.notNull("budget", budget);
            this.withoutBudget = false;
            return this;
        }

        /** No budget at all, not even the default one: every retry the policy allows is taken. */
        public Builder withoutBudget() {
            this.budget = null;
            this.withoutBudget = true;
            return this;
        }

        /**
         * Asked before every attempt, first attempts included: refuses locally, with a
         * {@link dev.stagger.ThrottledException}, as the server rejects more of what it is sent.
         * This client judges what the server accepted, whatever the throttle's own predicate:
         * failures (timeouts, resets, refused connections), the statuses the table retries
         * (408, 429, 500, 502, 503, 504 by default) and any 429 or 503 with {@code Retry-After}
         * are rejections; every other response is accepted. Share one throttle among all clients
         * of one downstream.
         */
        public Builder throttle(AdaptiveThrottle throttle) {
            this.throttle = Checks.notNull("throttle", throttle);
            return this;
        }

        /** Time and waiting; a {@link dev.stagger.testing.VirtualClock} in tests. */
        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        /** Randomness for jitter. */
        public Builder random(RandomSource random) {
            this.random = Checks.notNull("random", random);
            return this;
        }

        /** The downstream's name, used as the retry's name and in {@link HttpRetryEvent}. Default "http". */
        public Builder service(String service) {
            Checks.notNull("service", service);
            if (service.isBlank()) {
                throw new IllegalArgumentException("service must not be blank, got '" + service + "'");
            }
            this.service = service;
            return this;
        }

        /** Which statuses are retried. Default {@link StatusTable#defaults()}. */
        public Builder statusTable(StatusTable statuses) {
            this.statuses = Checks.notNull("statusTable", statuses);
            return this;
        }

        /**
         * Whether POST and PATCH get a generated key. Default {@link IdempotencyKeyMode#AUTO}. A key
         * makes a retry after an ambiguous outcome safe only where {@link #keysHonoured} says the
         * server honours it.
         */
        public Builder idempotencyKeys(IdempotencyKeyMode mode) {
            this.keyMode = Checks.notNull("idempotencyKeys", mode);
            return this;
        }

        /**
         * Which servers deduplicate requests by their {@code Idempotency-Key} (the IETF draft, or
         * Stripe's behaviour): a keyed POST or PATCH to a URI for which this says true is safe to
         * send again after an ambiguous outcome (500, 502, 504, a timeout or a reset after
         * sending), as an idempotent request is. For any other URI the server's support is
         * unknown, and a keyed request is retried only after outcomes that show it was not
         * processed. Default: unknown everywhere. Declare a whole service with
         * {@code keysHonoured(uri -> true)} (one client per downstream), or one host with
         * {@code keysHonoured(uri -> "api.example.com".equals(uri.getHost()))}.
         */
        public Builder keysHonoured(Predicate<URI> keysHonoured) {
            this.keysHonoured = Checks.notNull("keysHonoured", keysHonoured);
            return this;
        }

        /**
         * Which servers' {@value StaggerHeaders#NO_RETRY} this client honours: a retryable status
         * whose response carries it from a URI for which this says true is not retried (the answer
         * is already the result of a retry or a guard that decided). Default: every server. Say
         * false for a host outside your control, whose "do not retry" could stop retries you want
         * ({@code signalsTrusted(uri -> !"partner.example.com".equals(uri.getHost()))}). The
         * {@value StaggerHeaders#DEADLINE} header is sent to every server.
         */
        public Builder signalsTrusted(Predicate<URI> signalsTrusted) {
            this.signalsTrusted = Checks.notNull("signalsTrusted", signalsTrusted);
            return this;
        }

        /** The longest Retry-After honoured; longer hints are clamped to it. Default 5 minutes. */
        public Builder maxRetryAfter(Duration max) {
            Checks.notNull("maxRetryAfter", max);
            if (max.isNegative() || max.isZero()) {
                throw new IllegalArgumentException("maxRetryAfter must be positive, got " + max);
            }
            this.maxRetryAfter = max;
            return this;
        }

        /** Adds a listener told about each scheduled retry; listeners are called in the order added. */
        public Builder httpListener(HttpRetryListener listener) {
            listeners.add(Checks.notNull("httpListener", listener));
            return this;
        }

        /**
         * Adds a listener for the core retry events of every call (attempts, scheduled retries,
         * end reasons) — e.g. {@code RetryMetrics.of(registry).listener("payments")} for metrics.
         */
        public Builder listener(RetryListener listener) {
            retryListeners.add(Checks.notNull("listener", listener));
            return this;
        }

        /**
         * Names the operation in {@link HttpRetryEvent}; default method and path
         * ({@code "POST /orders"}). Map ids to a template ({@code "GET /orders/{id}"}) to keep the
         * number of distinct names small.
         */
        public Builder operationName(Function<HttpRequest, String> operationName) {
            this.operationName = Checks.notNull("operationName", operationName);
            return this;
        }

        /**
         * Serves a GET's last good response again, stale, when a later request for it fails on
         * an error (breaker open, budget or deadline reached, attempts exhausted): RFC 5861
         * {@code stale-if-error}. See {@link StaleResponseCache}. For {@link RetryingHttpClient#send}
         * and {@link RetryingHttpClient#sendAsync}; not for {@link RetryingHttpClient#execute}.
         */
        public Builder fallback(StaleResponseCache cache) {
            this.staleCache = Checks.notNull("fallback", cache);
            return this;
        }

        /**
         * Whether PUT and DELETE are hedged when the policy hedges. Default false: both are
         * idempotent, so retrying them is safe, but a hedge has two in flight at once, which race
         * (the DELETE processed second answers 404, and its answer may arrive first and end the
         * call). Say true for a service whose PUT and DELETE tolerate that (a PUT of a whole
         * resource, a DELETE answering 204 for a missing one).
         */
        public Builder hedgeIdempotentWrites(boolean hedgeIdempotentWrites) {
            this.hedgeIdempotentWrites = hedgeIdempotentWrites;
            return this;
        }

        public RetryingHttpClient build() {
            return new RetryingHttpClient(this);
        }
    }
}
