package dev.stagger.idempotency.servlet;

import dev.stagger.idempotency.Claim;
import dev.stagger.idempotency.IdempotencyCompletion;
import dev.stagger.idempotency.IdempotencyKey;
import dev.stagger.idempotency.IdempotencyListener;
import dev.stagger.idempotency.IdempotencyOutcome;
import dev.stagger.idempotency.IdempotencyScope;
import dev.stagger.idempotency.IdempotencyStore;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.internal.Checks;
import dev.stagger.jdbc.StoreException;
import dev.stagger.idempotency.RequestFingerprint;
import dev.stagger.idempotency.StoredResponse;
import dev.stagger.idempotency.internal.BufferedRequest;
import dev.stagger.idempotency.internal.CapturingResponse;
import dev.stagger.idempotency.internal.GuardedConnection;
import dev.stagger.idempotency.internal.Problems;
import dev.stagger.idempotency.internal.SafeListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Makes retried requests execute once: the servlet side of the IETF {@code Idempotency-Key}
 * draft. Register it after authentication (it scopes keys by the principal) and before the
 * handlers.
 *
 * <table>
 * <caption>Responses</caption>
 * <tr><th>Situation</th><th>Response</th></tr>
 * <tr><td>first request with a key</td><td>the handler runs; its response is stored, then sent</td></tr>
 * <tr><td>same key and request after completion</td><td>stored response, {@code Idempotent-Replayed: true}</td></tr>
 * <tr><td>same key while the first still runs</td><td>409 problem, {@code Retry-After}</td></tr>
 * <tr><td>same key, different request</td><td>422 problem</td></tr>
 * <tr><td>key missing where required, or invalid</td><td>400 problem</td></tr>
 * <tr><td>key but no principal and no scope resolver answer</td><td>400 problem</td></tr>
 * <tr><td>request body over the fingerprint limit</td><td>413 problem</td></tr>
 * <tr><td>store unreachable</td><td>503 problem, handler not run</td></tr>
 * </table>
 *
 * <p>5xx responses and exceptions release the key by default, so the client's retry runs the
 * handler again; {@link Builder#storeServerErrors(boolean)} stores 5xx responses too (Stripe's
 * choice). A {@code 429} or {@code 503} is never stored: it says the request was refused, not
 * processed, and replaying it would refuse every retry of the key. Responses whose body exceeds {@link Builder#maxStoredBodySize(int)}, that use
 * {@code sendError}, or that go async are sent as usual but not stored, and the key is released.
 * Requests the {@link KeyRequirement} ignores (by default GET, HEAD, OPTIONS) and requests without
 * a key where it is optional pass through with no wrapping at all, so streaming is untouched.
 *
 * <p><b>Transactional routes.</b> Without a transaction, a server that dies after the handler's
 * writes committed and before the response was stored runs the request again on the client's
 * retry. For routes marked {@link Builder#transactional(RequestTransactions, BiPredicate)
 * transactional}, the handler runs inside a transaction on the store's database, the response is
 * stored in that same transaction, and only after the commit is it sent: a crash at any point
 * leaves either nothing (the retry runs the request) or the handler's writes with their stored
 * response (the retry gets the replay). Plain servlet code writes through
 * {@link #transactionConnection(ServletRequest)}.
 */
public final class IdempotencyFilter implements Filter {
    /** The request header carrying the key. */
    public static final String KEY_HEADER = "Idempotency-Key";
    /** Marks a replayed response. */
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";

    private static final String FORM = "application/x-www-form-urlencoded";
    private static final String CONNECTION_ATTRIBUTE = IdempotencyFilter.class.getName() + ".connection";

    private final IdempotencyStore store;
    private final Duration lease;
    private final Duration expiry;
    private final int maxStoredBodySize;
    private final int maxRequestBodySize;
    private final boolean storeServerErrors;
    private final long retryAfterSeconds;
    private final KeyRequirement requirement;
    private final ScopeResolver scopeResolver;
    private final Function<HttpServletRequest, String> routeResolver;
    private final List<String> fingerprintHeaders;
    private final List<String> storedHeaders;
    private final IdempotencyListener listener;
    private final ErrorBodyWriter errorBodyWriter;
    private final @Nullable RequestTransactions transactions;
    private final BiPredicate<String, String> transactionalRoutes;

    private IdempotencyFilter(Builder b) {
        this.store = b.store;
        this.lease = b.lease;
        this.expiry = b.expiry;
        this.maxStoredBodySize = b.maxStoredBodySize;
        this.maxRequestBodySize = b.maxRequestBodySize;
        this.storeServerErrors = b.storeServerErrors;
        this.retryAfterSeconds = Math.max(1, (b.retryAfter.toMillis() + 999) / 1000);
        this.requirement = b.requirement;
        this.scopeResolver = b.scopeResolver;
        this.routeResolver = b.routeResolver;
        this.fingerprintHeaders = List.copyOf(b.fingerprintHeaders);
        this.storedHeaders = List.copyOf(b.storedHeaders);
        this.listener = new SafeListener(b.listener);
        this.errorBodyWriter = b.errorBodyWriter;
        this.transactions = b.transactions;
        this.transactionalRoutes = b.transactionalRoutes;
    }

    public static Builder builder(IdempotencyStore store) {
        if (store == null) {
            throw new NullPointerException("store must not be null");
        }
        return new Builder(store);
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        String method = request.getMethod().toUpperCase(Locale.ROOT);
        String route = routeResolver.apply(request);
        KeyPolicy policy = requirement.policy(method, route);
        if (policy == KeyPolicy.IGNORED) {
            chain.doFilter(req, res);
            return;
        }
        Enumeration<String> keyValues = request.getHeaders(KEY_HEADER);
        List<String> keyHeaders = keyValues == null ? List.of() : Collections.list(keyValues);
        if (keyHeaders.isEmpty()) {
            if (policy == KeyPolicy.REQUIRED) {
                refuse(IdempotencyOutcome.KEY_MISSING, request, response, method, route);
            } else {
                chain.doFilter(req, res);
            }
            return;
        }
        Optional<IdempotencyKey> key = keyHeaders.size() == 1 ? IdempotencyKey.parse(keyHeaders.get(0)) : Optional.empty();
        if (key.isEmpty()) {
            refuse(IdempotencyOutcome.KEY_INVALID, request, response, method, route);
            return;
        }
        Optional<String> client = clientOf(request);
        if (client.isEmpty()) {
            refuse(IdempotencyOutcome.NO_CLIENT_SCOPE, request, response, method, route);
            return;
        }
        // a form is parsed by the container, with its own limits, before anything reads the body: the
        // parameters are then the same whether or not a filter ahead of this one asked for one
        Map<String, String[]> form = isForm(request) ? request.getParameterMap() : null;
        byte[] body = request.getInputStream().readNBytes(maxRequestBodySize + 1);
        if (body.length > maxRequestBodySize) {
            refuse(IdempotencyOutcome.BODY_TOO_LARGE, request, response, method, route);
            return;
        }
        long declared = request.getContentLengthLong();
        if (form == null && declared > body.length) {
            throw new ServletException("IdempotencyFilter cannot fingerprint this request: only " + body.length
                    + " of its " + declared + " body bytes were left to read. Something before the filter read the"
                    + " body; register IdempotencyFilter ahead of any filter that reads the request body");
        }
        IdempotencyScope scope = new IdempotencyScope(client.get(), method, route, key.get());
        RequestFingerprint fingerprint = form == null
                ? RequestFingerprint.of(method, request.getRequestURI(), request.getQueryString(),
                        selectedHeaders(request), body)
                : RequestFingerprint.ofForm(method, request.getRequestURI(), request.getQueryString(),
                        selectedHeaders(request), form, body, body.length);
        boolean inTransaction = transactions != null && transactionalRoutes.test(method, route);
        Claim claim;
        try {
            claim = inTransaction ? ((JdbcIdempotencyStore) store).claimForTransaction(scope, fingerprint, lease, expiry)
                    : store.claim(scope, fingerprint, lease, expiry);
        } catch (StoreException e) {
            refuse(IdempotencyOutcome.STORE_UNAVAILABLE, request, response, method, route);
            return;
        }
        if (claim instanceof Claim.Replay) {
            listener.decided(IdempotencyOutcome.REPLAYED, method, route);
            replay(((Claim.Replay) claim).response(), response);
        } else if (claim instanceof Claim.InFlight) {
            refuse(IdempotencyOutcome.IN_FLIGHT, request, response, method, route);
        } else if (claim instanceof Claim.Mismatch) {
            refuse(IdempotencyOutcome.KEY_REUSED, request, response, method, route);
        } else {
            Claim.Acquired acquired = (Claim.Acquired) claim;
            listener.decided(acquired.tookOver() ? IdempotencyOutcome.TOOK_OVER : IdempotencyOutcome.EXECUTED,
                    method, route);
            BufferedRequest buffered = new BufferedRequest(request, body, body.length);
            if (inTransaction) {
                executeInTransaction(buffered, response, chain, scope, acquired.leaseToken());
            } else {
                execute(buffered, response, chain, scope, acquired.leaseToken());
            }
        }
    }

    /**
     * The connection of the transaction a keyed request on a transactional route runs in: write the
     * handler's effects through it, and they commit together with the stored response. The filter
     * ends the transaction: {@code close()} on it does nothing, and {@code commit},
     * {@code rollback} and {@code setAutoCommit} throw {@link IllegalStateException}. Valid on the
     * request's thread until the handler returns.
     *
     * @throws IllegalStateException when the request does not run in such a transaction (no key, a
     *     route not marked transactional, or a filter without transactions)
     */
    public static Connection transactionConnection(ServletRequest request) {
        Object connection = request.getAttribute(CONNECTION_ATTRIBUTE);
        if (!(connection instanceof Connection)) {
            throw new IllegalStateException("this request runs in no idempotency transaction: only keyed requests on"
                    + " routes set with IdempotencyFilter.Builder.transactional(..) do");
        }
        return (Connection) connection;
    }

    /**
     * A first execution in one transaction: the handler's writes and the stored response commit
     * together, and the response is sent only after that commit. The claim was committed on its
     * own before (so repeats see it and get 409 meanwhile); if this server dies before the commit,
     * the transaction rolls back with the handler's writes, the claim's lease runs out, and a
     * repeat runs the request again, which is then its only execution.
     */
    private void executeInTransaction(BufferedRequest request, HttpServletResponse response, FilterChain chain,
                                      IdempotencyScope scope, String leaseToken) throws IOException, ServletException {
        String method = scope.method();
        String route = scope.route();
        RequestTransactions.Transaction tx;
        try {
            tx = Objects.requireNonNull(transactions, "transactions").begin(); // in a transaction only with them
        } catch (SQLException e) {
            releaseQuietly(scope, leaseToken);
            listener.completed(IdempotencyCompletion.STORE_FAILED, method, route, 503);
            answer(IdempotencyOutcome.STORE_UNAVAILABLE, request, response);
            return;
        } catch (RuntimeException e) {
            // a misconfiguration (a transaction manager on another database, say): loud, as the container reports it
            releaseQuietly(scope, leaseToken);
            listener.completed(IdempotencyCompletion.FAILED, method, route, 500);
            throw e;
        }
        CapturingResponse capture = new CapturingResponse(response, maxStoredBodySize);
        boolean ran = false;
        request.setAttribute(CONNECTION_ATTRIBUTE, GuardedConnection.of(tx.connection()));
        try {
            chain.doFilter(request, capture);
            ran = true;
        } finally {
            request.removeAttribute(CONNECTION_ATTRIBUTE);
            if (!ran) {
                rollbackQuietly(tx);
                releaseQuietly(scope, leaseToken);
                listener.completed(IdempotencyCompletion.FAILED, method, route, response.getStatus());
            }
        }
        if (request.isAsyncStarted()) {
            capture.abandon();
        }
        int status = response.getStatus();
        boolean refusal = saysNotProcessed(status) || (status >= 500 && !storeServerErrors);
        if (capture.abandoned() || capture.body().length > maxStoredBodySize) {
            // the response cannot be stored and may be on its way already: a refusal's writes are rolled back, any
            // other's stand, as they would without a transaction; the key is released either way
            boolean kept = false;
            if (refusal) {
                rollbackQuietly(tx);
            } else {
                kept = commitQuietly(tx);
            }
            releaseQuietly(scope, leaseToken);
            listener.completed(refusal || kept ? IdempotencyCompletion.NOT_STORED : IdempotencyCompletion.STORE_FAILED,
                    method, route, status);
            if (!capture.abandoned()) {
                capture.release();
            }
            return;
        }
        if (refusal) {
            // nothing is stored, so nothing the handler wrote is kept either: the retry runs on a clean slate
            rollbackQuietly(tx);
            releaseQuietly(scope, leaseToken);
            listener.completed(IdempotencyCompletion.RELEASED, method, route, status);
            capture.release();
            return;
        }
        boolean stored;
        try {
            stored = ((JdbcIdempotencyStore) store).complete(tx.connection(), scope, leaseToken,
                    StoredResponse.of(status, storableHeaders(response), capture.body()), expiry);
        } catch (RuntimeException e) {
            // the store failed, or the handler left the transaction unusable (an error it caught): nothing is kept
            rollbackQuietly(tx);
            releaseQuietly(scope, leaseToken);
            listener.completed(IdempotencyCompletion.STORE_FAILED, method, route, status);
            discard(capture, response);
            answer(IdempotencyOutcome.STORE_UNAVAILABLE, request, response);
            return;
        }
        if (!stored) {
            // a repeat took the key over after the lease ran out and runs (or ran) the request: this execution's
            // writes are rolled back, so only one of them counts, and this client is told the key is busy
            rollbackQuietly(tx);
            listener.completed(IdempotencyCompletion.LEASE_LOST, method, route, status);
            discard(capture, response);
            answer(IdempotencyOutcome.IN_FLIGHT, request, response);
            return;
        }
        try {
            tx.commit();
        } catch (SQLException | RuntimeException e) {
            // committed or not, the record says which: a COMPLETED one is not released and the retry replays it
            releaseQuietly(scope, leaseToken);
            listener.completed(IdempotencyCompletion.STORE_FAILED, method, route, status);
            discard(capture, response);
            answer(IdempotencyOutcome.STORE_UNAVAILABLE, request, response);
            return;
        }
        listener.completed(IdempotencyCompletion.STORED, method, route, status);
        capture.release();
    }

    /** Drops a captured response that was never sent, so the filter can answer in its place. */
    private static void discard(CapturingResponse capture, HttpServletResponse response) {
        capture.resetBuffer();
        response.reset();
    }

    private static void rollbackQuietly(RequestTransactions.Transaction tx) {
        try {
            tx.rollback();
        } catch (SQLException | RuntimeException e) {
            // the transaction ends with its connection at the latest; nothing of it was committed
        }
    }

    private static boolean commitQuietly(RequestTransactions.Transaction tx) {
        try {
            tx.commit();
            return true;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    /** Answers an error outcome: status (and Retry-After for 409 and 503) here, the body from the writer. */
    private void refuse(IdempotencyOutcome outcome, HttpServletRequest request, HttpServletResponse response,
                        String method, String route) throws IOException {
        listener.decided(outcome, method, route);
        answer(outcome, request, response);
    }

    /** Writes an error outcome's answer: status (and Retry-After for 409 and 503) here, the body from the writer. */
    private void answer(IdempotencyOutcome outcome, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        response.setStatus(Problems.of(outcome).status());
        if (outcome == IdempotencyOutcome.IN_FLIGHT || outcome == IdempotencyOutcome.STORE_UNAVAILABLE) {
            response.setHeader("Retry-After", Long.toString(retryAfterSeconds));
        }
        errorBodyWriter.write(outcome, request, response);
    }

    private void execute(BufferedRequest request, HttpServletResponse response, FilterChain chain,
                         IdempotencyScope scope, String leaseToken) throws IOException, ServletException {
        CapturingResponse capture = new CapturingResponse(response, maxStoredBodySize);
        boolean ran = false;
        try {
            chain.doFilter(request, capture);
            ran = true;
        } finally {
            if (!ran) {
                releaseQuietly(scope, leaseToken);
                listener.completed(IdempotencyCompletion.FAILED, scope.method(), scope.route(), response.getStatus());
            }
        }
        if (request.isAsyncStarted()) {
            capture.abandon();
        }
        int status = response.getStatus();
        if (capture.abandoned()) {
            releaseQuietly(scope, leaseToken);
            listener.completed(IdempotencyCompletion.NOT_STORED, scope.method(), scope.route(), status);
            return;
        }
        byte[] body = capture.body();
        IdempotencyCompletion completion;
        if (saysNotProcessed(status) || (status >= 500 && !storeServerErrors)) {
            releaseQuietly(scope, leaseToken);
            completion = IdempotencyCompletion.RELEASED;
        } else if (body.length > maxStoredBodySize) {
            // a writer's characters can encode to more bytes than the limit allowed for
            releaseQuietly(scope, leaseToken);
            completion = IdempotencyCompletion.NOT_STORED;
        } else {
            try {
                completion = store.complete(scope, leaseToken, StoredResponse.of(status, storableHeaders(response), body),
                        expiry) ? IdempotencyCompletion.STORED : IdempotencyCompletion.LEASE_LOST;
            } catch (StoreException | IllegalArgumentException e) {
                // the response still goes out; the key is freed so a retry runs again rather than waiting on the lease
                releaseQuietly(scope, leaseToken);
                completion = IdempotencyCompletion.STORE_FAILED;
            }
        }
        listener.completed(completion, scope.method(), scope.route(), status);
        capture.release();
    }

    /**
     * 429 and 503 say the request was refused, not processed (a rate limit, a shedding filter,
     * an overloaded handler): storing one would replay the refusal to every retry of the key until
     * it expires, so the key is released whatever {@code storeServerErrors} says.
     */
    private static boolean saysNotProcessed(int status) {
        return status == 429 || status == 503;
    }

    private void releaseQuietly(IdempotencyScope scope, String leaseToken) {
        try {
            store.release(scope, leaseToken);
        } catch (StoreException e) {
            // the lease expires by itself; nothing more can be done here
        }
    }

    private void replay(StoredResponse stored, HttpServletResponse response) throws IOException {
        response.setStatus(stored.status());
        // the original's values replace any this response got from outer layers (a Request-Id set per request)
        stored.headers().forEach((name, values) -> {
            for (int i = 0; i < values.size(); i++) {
                if (i == 0) {
                    response.setHeader(name, values.get(i));
                } else {
                    response.addHeader(name, values.get(i));
                }
            }
        });
        response.setHeader(REPLAYED_HEADER, "true");
        response.setContentLength(stored.bodyLength());
        response.getOutputStream().write(stored.body());
    }

    private static boolean isForm(HttpServletRequest request) {
        String type = request.getContentType();
        return type != null && type.trim().regionMatches(true, 0, FORM, 0, FORM.length());
    }

    private Optional<String> clientOf(HttpServletRequest request) {
        Principal principal = request.getUserPrincipal();
        if (principal != null && principal.getName() != null && !principal.getName().isBlank()) {
            return Optional.of("principal:" + principal.getName());
        }
        return scopeResolver.resolve(request).filter(s -> !s.isBlank()).map(s -> "client:" + s);
    }

    private Map<String, String> selectedHeaders(HttpServletRequest request) {
        Map<String, String> selected = new LinkedHashMap<>();
        for (String name : fingerprintHeaders) {
            Enumeration<String> values = request.getHeaders(name);
            if (values != null && values.hasMoreElements()) {
                selected.put(name, String.join(",", Collections.list(values)));
            }
        }
        return selected;
    }

    private Map<String, List<String>> storableHeaders(HttpServletResponse response) {
        Map<String, List<String>> kept = new LinkedHashMap<>();
        for (String name : storedHeaders) {
            Collection<String> values = response.getHeaders(name);
            if (values != null && !values.isEmpty()) {
                kept.put(name, new ArrayList<>(values));
            }
        }
        return kept;
    }

    /** Configures an {@link IdempotencyFilter}; {@link #build()} validates and snapshots. Not thread-safe. */
    public static final class Builder {
        private final IdempotencyStore store;
        private Duration lease = Duration.ofSeconds(60);
        private Duration expiry = Duration.ofHours(24);
        private int maxStoredBodySize = 1 << 20;
        private int maxRequestBodySize = 1 << 20;
        private boolean storeServerErrors;
        private Duration retryAfter = Duration.ofSeconds(1);
        private KeyRequirement requirement = KeyRequirement.defaults();
        private ScopeResolver scopeResolver = ScopeResolver.none();
        private Function<HttpServletRequest, String> routeResolver = Builder::pathWithinApplication;
        private List<String> fingerprintHeaders = List.of("Content-Type");
        private List<String> storedHeaders = List.of("Content-Type", "Content-Language", "Content-Location",
                "Location", "ETag", "Last-Modified", "Link", "Request-Id", "X-Request-Id");
        private IdempotencyListener listener = IdempotencyListener.none();
        private ErrorBodyWriter errorBodyWriter = ErrorBodyWriter.problemDetails();
        private @Nullable RequestTransactions transactions;
        private BiPredicate<String, String> transactionalRoutes = (method, route) -> true;

        private Builder(IdempotencyStore store) {
            this.store = store;
        }

        /**
         * How long a request may run before a repeat may take its key over (its server is then
         * presumed dead). Longer than your slowest handler. Default 60 s.
         */
        public Builder lease(Duration lease) {
            this.lease = Checks.positive("lease", lease);
            return this;
        }

        /** How long a completed response is kept for replay; longer than the lease. Default 24 h. */
        public Builder expiry(Duration expiry) {
            this.expiry = Checks.positive("expiry", expiry);
            return this;
        }

        /** Largest body stored for replay; larger responses are sent but not stored. Default 1 MiB. */
        public Builder maxStoredBodySize(int bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("maxStoredBodySize must not be negative, got " + bytes);
            }
            this.maxStoredBodySize = bytes;
            return this;
        }

        /** Largest request body read to fingerprint; larger requests get 413. Default 1 MiB. */
        public Builder maxRequestBodySize(int bytes) {
            if (bytes < 0 || bytes == Integer.MAX_VALUE) {
                throw new IllegalArgumentException("maxRequestBodySize must be 0.." + (Integer.MAX_VALUE - 1)
                        + ", got " + bytes);
            }
            this.maxRequestBodySize = bytes;
            return this;
        }

        /**
         * Store 5xx responses for replay too (Stripe's choice) instead of releasing the key; a
         * {@code 503}, like a {@code 429}, is still released (a refusal, not a result).
         * Exceptions thrown by the handler always release it: there is no response to store.
         * Default false.
         */
        public Builder storeServerErrors(boolean storeServerErrors) {
            this.storeServerErrors = storeServerErrors;
            return this;
        }

        /** The Retry-After sent with 409 (in flight) and 503 (store down); rounded up to seconds. Default 1 s. */
        public Builder retryAfter(Duration retryAfter) {
            this.retryAfter = Checks.positive("retryAfter", retryAfter);
            return this;
        }

        /** Which requests need, accept or ignore keys. Default {@link KeyRequirement#defaults()}. */
        public Builder keyRequirement(KeyRequirement requirement) {
            this.requirement = Checks.notNull("keyRequirement", requirement);
            return this;
        }

        /** Names clients that have no principal. Default {@link ScopeResolver#none()}. */
        public Builder scopeResolver(ScopeResolver scopeResolver) {
            this.scopeResolver = Checks.notNull("scopeResolver", scopeResolver);
            return this;
        }

        /**
         * The route part of the scope, e.g. a framework's route template. Default: the path
         * within the application ({@code /orders/42}).
         */
        public Builder routeResolver(Function<HttpServletRequest, String> routeResolver) {
            this.routeResolver = Checks.notNull("routeResolver", routeResolver);
            return this;
        }

        /** Request headers that enter the fingerprint. Default Content-Type. */
        public Builder fingerprintHeaders(List<String> names) {
            this.fingerprintHeaders = headerNames("fingerprintHeaders", names);
            return this;
        }

        /**
         * Response headers kept for replay. Default Content-Type, Content-Language,
         * Content-Location, Location, ETag, Last-Modified, Link (what describes the result) and
         * Request-Id, X-Request-Id (the id under which the work was done, so that a client holding
         * a replay can quote the id the server logged). On replay the stored values replace any
         * the response got from filters outside this one. Never add Set-Cookie or anything
         * per-session.
         */
        public Builder storedHeaders(List<String> names) {
            this.storedHeaders = headerNames("storedHeaders", names);
            return this;
        }

        /**
         * Hears every decision (first executions, takeovers, replays, 409s, 422s and the other
         * refusals) and what became of each executed request's response. Default
         * {@link IdempotencyListener#none()}; stagger-observability's {@code IdempotencyMetrics}
         * publishes them as meters.
         */
        public Builder idempotencyListener(IdempotencyListener listener) {
            this.listener = Checks.notNull("idempotencyListener", listener);
            return this;
        }

        /**
         * Writes the body of the filter's own 400, 409, 413, 422 and 503 answers, for APIs with an
         * error format of their own. Default {@link ErrorBodyWriter#problemDetails()}.
         */
        public Builder errorBodyWriter(ErrorBodyWriter errorBodyWriter) {
            this.errorBodyWriter = Checks.notNull("errorBodyWriter", errorBodyWriter);
            return this;
        }

        /**
         * Runs every keyed request's handler in a transaction begun by {@code transactions} and
         * stores its response in that transaction; see {@link #transactional(RequestTransactions,
         * BiPredicate)}.
         */
        public Builder transactional(RequestTransactions transactions) {
            return transactional(transactions, (method, route) -> true);
        }

        /**
         * Runs the handler of a keyed request whose method and route {@code routes} accepts in a
         * transaction begun by {@code transactions} on the store's database, stores the response in
         * that same transaction, commits, and only then sends the response. The handler's writes
         * through that transaction (plain servlet code:
         * {@link IdempotencyFilter#transactionConnection(ServletRequest)}) and the stored response
         * then commit together or not at all, so a server that dies at any point leaves either
         * nothing, and the retry runs the request, or both, and the retry gets the replay.
         *
         * <p>A response not stored (5xx, 429, 503, an exception) rolls the handler's writes back;
         * one that cannot be stored (over {@link #maxStoredBodySize}, {@code sendError} with a
         * 4xx, async) may already be on its way to the client, so its writes are committed and the
         * key released, as without a transaction. When the commit fails the client gets the
         * store-unavailable 503 instead of the handler's response; when the lease was lost to a
         * repeat meanwhile, the writes are rolled back and the client gets 409. The transaction is
         * held for the whole request. Needs a {@link JdbcIdempotencyStore} on PostgreSQL.
         *
         * @param routes takes the method (upper case) and the route
         */
        public Builder transactional(RequestTransactions transactions, BiPredicate<String, String> routes) {
            this.transactions = Checks.notNull("transactions", transactions);
            this.transactionalRoutes = Checks.notNull("routes", routes);
            return this;
        }

        /**
         * @throws IllegalArgumentException when the expiry is not longer than the lease: a record
         *     past its expiry counts as absent, so a repeat would run while the first still runs
         */
        public IdempotencyFilter build() {
            if (expiry.compareTo(lease) <= 0) {
                throw new IllegalArgumentException("expiry must be longer than the lease " + lease + ", got " + expiry);
            }
            if (transactions != null
                    && !(store instanceof JdbcIdempotencyStore jdbc && jdbc.completesInTransactions())) {
                throw new IllegalArgumentException("transactional needs a JdbcIdempotencyStore on PostgreSQL, got "
                        + store);
            }
            return new IdempotencyFilter(this);
        }

        private static String pathWithinApplication(HttpServletRequest request) {
            String uri = request.getRequestURI();
            String context = request.getContextPath();
            return context != null && !context.isEmpty() && uri.startsWith(context) ? uri.substring(context.length()) : uri;
        }

        private static List<String> headerNames(String field, List<String> names) {
            if (names == null || names.stream().anyMatch(n -> n == null || !n.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]+"))) {
                throw new IllegalArgumentException(field + " must be a list of header names, got " + names);
            }
            return List.copyOf(names);
        }
    }

    @Override
    public String toString() {
        return "IdempotencyFilter{store=" + store + ", lease=" + lease + ", expiry=" + expiry + "}";
    }
}
