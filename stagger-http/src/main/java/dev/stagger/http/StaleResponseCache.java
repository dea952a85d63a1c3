package dev.stagger.http;

import dev.stagger.Cached;
import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.Fallback;
import dev.stagger.FallbackCache;
import dev.stagger.FallbackContext;
import dev.stagger.http.internal.RetryAfter;
import dev.stagger.internal.Checks;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Flow;
import javax.net.ssl.SSLSession;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP client's fallback: the last good response to each GET, served again, stale, when a
 * later request for it fails — the semantics of RFC 5861 {@code stale-if-error}. Set it with
 * {@link RetryingHttpClient.Builder#fallback(StaleResponseCache)}.
 *
 * <h2>What is stored</h2>
 * A 2xx response to a GET whose body was read as a {@code String} or {@code byte[]}
 * ({@code BodyHandlers.ofString()}, {@code ofByteArray()}), unless it says
 * {@code Cache-Control: no-store} or {@code Vary: *}. Its body is kept as bytes and replayed
 * through the body handler of the request it answers, so any handler can receive it. A response
 * with {@code Vary} is served only to a request with the same values of those headers.
 *
 * <h2>When it is served</h2>
 * When a GET's call ends without success on an <em>error</em> (RFC 5861 §4): the breaker
 * refused it, the budget refused a retry, the deadline or the attempts ran out, with an
 * exception (no connection, a timeout) or a 500, 502, 503 or 504 as its last outcome. A 404 or
 * any other answer the server gave is returned as it is. The stored response is served while its
 * age is at most its freshness lifetime ({@code max-age}, zero without one) plus its
 * {@code stale-if-error} seconds, or, when it has none, plus {@link Builder#staleIfError} (zero
 * by default: only what the server allowed is served). {@code no-cache} or
 * {@code must-revalidate} without a {@code stale-if-error} forbid serving it stale (RFC 9111
 * §4.2.4). {@link Builder#maxStaleness} caps every entry.
 *
 * <h2>Nothing to serve</h2>
 * With {@link Builder#userMessage}, a failed GET with nothing fresh enough ends with a
 * {@link dev.stagger.UserFacingException}: the message and when to try again (the last
 * response's {@code Retry-After}, else the breaker's next probe).
 *
 * <h2>How the caller knows</h2>
 * A served response carries {@code Age} (RFC 9111 §5.1: seconds since the origin made it, the
 * origin's own {@code Age} included) and {@value #STALE_HEADER}, whose value is the end reason in
 * lower case ({@code circuit_open}, {@code exhausted}, ...), so a page can say "as of 3 minutes
 * ago". {@link #isStale} and {@link #age} read them. The call's end event reports a fallback of
 * kind {@code cache}.
 *
 * <p>Thread-safe: one cache serves any number of concurrent calls (see {@link FallbackCache}).
 */
public final class StaleResponseCache {
    /** The header a served stale response carries; its value is why the call ended. */
    public static final String STALE_HEADER = "Stagger-Stale";

    private static final int[] ERROR_STATUSES = {500, 502, 503, 504};

    private final FallbackCache<String, Stored> responses;
    private final long defaultStaleIfErrorMillis;
    private final Clock clock;
    private final @Nullable String userMessage;

    /** A stored response: what to replay and how long it may be served. */
    private record Stored(int status, HttpHeaders headers, byte[] body, HttpClient.Version version,
                          HttpRequest request, Map<String, List<String>> vary, long servableMillis,
                          long originAgeSeconds) {
    }

    private StaleResponseCache(Builder b) {
        this.responses = FallbackCache.<String, Stored>builder("http").maxSize(b.maxEntries)
                .maxStaleness(b.maxStaleness).clock(b.clock).build();
        this.defaultStaleIfErrorMillis = b.staleIfError.toMillis();
        this.clock = b.clock;
        this.userMessage = b.userMessage;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** True when {@code response} was served stale by a {@code StaleResponseCache}. */
    public static boolean isStale(HttpResponse<?> response) {
        return response.headers().firstValue(STALE_HEADER).isPresent();
    }

    /** A stale response's age (its {@code Age} header); empty for a response that is not stale. */
    public static Optional<Duration> age(HttpResponse<?> response) {
        if (!isStale(response)) {
            return Optional.empty();
        }
        return response.headers().firstValueAsLong("Age").stream().mapToObj(Duration::ofSeconds).findFirst();
    }

    /** Keeps {@code response} as the last good answer to {@code request}, if it may be stored. */
    void remember(HttpRequest request, HttpResponse<?> response) {
        if (!"GET".equalsIgnoreCase(request.method()) || response.statusCode() / 100 != 2 || isStale(response)) {
            return;
        }
        Directives cc = Directives.of(response.headers());
        if (cc.noStore) {
            return;
        }
        List<String> varyNames = varyNames(response.headers());
        if (varyNames.contains("*")) {
            return;
        }
        byte[] body = bodyBytes(response);
        if (body == null) {
            return;
        }
        long freshMillis = Math.max(0, cc.maxAge) * 1000;
        long servable;
        if (cc.staleIfError >= 0) {
            servable = freshMillis + cc.staleIfError * 1000;
        } else if (cc.noCache || cc.mustRevalidate) {
            return; // nothing it may ever be served for
        } else {
            servable = freshMillis + defaultStaleIfErrorMillis;
        }
        Map<String, List<String>> vary = new LinkedHashMap<>();
        for (String name : varyNames) {
            vary.put(name, request.headers().allValues(name));
        }
        long originAge = response.headers().firstValueAsLong("Age").orElse(0);
        responses.put(key(request.uri()), new Stored(response.statusCode(), response.headers(), body,
                response.version(), response.request(), vary, servable, Math.max(0, originAge)));
    }

    /** The fallback for one GET: the stored response, replayed through {@code bodyHandler}, when the call failed on an error. */
    <T> Fallback<HttpResponse<T>> fallbackFor(HttpRequest request, HttpResponse.BodyHandler<T> bodyHandler) {
        Fallback<HttpResponse<T>> stale = Fallback.<HttpResponse<T>>ofOptional(context -> serve(request, bodyHandler, context))
                .withKind("cache");
        if (userMessage == null) {
            return stale;
        }
        return stale.orElse(Fallback.<HttpResponse<T>>message(context -> userMessage, StaleResponseCache::retryIn)
                .when(StaleResponseCache::endedOnError));
    }

    /**
     * When trying again is worthwhile after a call that ended on an error: the last response's
     * {@code Retry-After} (seconds or HTTP-date, at most a day), else the circuit breaker's next
     * probe ({@link FallbackContext#retryIn()}). For messages made by hand with
     * {@link Fallback#message(java.util.function.Function, java.util.function.Function)}.
     */
    public static Optional<Duration> retryIn(FallbackContext context) {
        Object last = context.lastResult().orElse(null);
        if (last instanceof HttpResponse<?> response) {
            Optional<Duration> hint = RetryAfter.parse(response.headers().firstValue("Retry-After").orElse(null),
                    context.clock().currentTimeMillis(), Duration.ofDays(1));
            if (hint.isPresent()) {
                return hint;
            }
        }
        return context.retryIn();
    }

    private <T> Optional<HttpResponse<T>> serve(HttpRequest request, HttpResponse.BodyHandler<T> bodyHandler,
                                                FallbackContext context) {
        if (!endedOnError(context)) {
            return Optional.empty();
        }
        Optional<Cached<Stored>> hit = responses.get(key(request.uri()));
        if (hit.isEmpty()) {
            return Optional.empty();
        }
        Stored stored = hit.get().value();
        long ageMillis = hit.get().age().toMillis();
        if (ageMillis > stored.servableMillis) {
            return Optional.empty();
        }
        for (Map.Entry<String, List<String>> v : stored.vary.entrySet()) {
            if (!request.headers().allValues(v.getKey()).equals(v.getValue())) {
                return Optional.empty();
            }
        }
        long ageSeconds = stored.originAgeSeconds + ageMillis / 1000;
        return Optional.of(replay(stored, bodyHandler, ageSeconds, context.reason())); // the client releases the replaced error's body
    }

    private static boolean endedOnError(FallbackContext context) {
        if (context.reason() == EndReason.INTERRUPTED) {
            return false;
        }
        if (context.failure().isPresent()) {
            return true;
        }
        Object last = context.lastResult().orElse(null);
        if (last instanceof HttpResponse<?> response) {
            for (int status : ERROR_STATUSES) {
                if (response.statusCode() == status) {
                    return true;
                }
            }
        }
        return false;
    }

    private static <T> HttpResponse<T> replay(Stored stored, HttpResponse.BodyHandler<T> bodyHandler, long ageSeconds,
                                              EndReason reason) {
        Map<String, List<String>> headers = new LinkedHashMap<>(stored.headers.map());
        headers.keySet().removeIf(name -> name.equalsIgnoreCase("Age") || name.equalsIgnoreCase(STALE_HEADER));
        headers.put("Age", List.of(Long.toString(ageSeconds)));
        headers.put(STALE_HEADER, List.of(reason.name().toLowerCase(Locale.ROOT)));
        HttpHeaders served = HttpHeaders.of(headers, (name, value) -> true);
        HttpResponse.BodySubscriber<T> subscriber = bodyHandler.apply(new HttpResponse.ResponseInfo() {
            @Override
            public int statusCode() {
                return stored.status;
            }

            @Override
            public HttpHeaders headers() {
                return served;
            }

            @Override
            public HttpClient.Version version() {
                return stored.version;
            }
        });
        subscriber.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {
            }

            @Override
            public void cancel() {
            }
        });
        subscriber.onNext(List.of(ByteBuffer.wrap(stored.body)));
        subscriber.onComplete();
        T body = subscriber.getBody().toCompletableFuture().join();
        return new StaleResponse<>(stored, served, body);
    }

    private static String key(URI uri) {
        return uri.toString();
    }

    private static List<String> varyNames(HttpHeaders headers) {
        List<String> names = new ArrayList<>();
        for (String value : headers.allValues("Vary")) {
            for (String name : value.split(",")) {
                String n = name.trim();
                if (!n.isEmpty()) {
                    names.add(n.equals("*") ? "*" : n.toLowerCase(Locale.ROOT));
                }
            }
        }
        return names;
    }

    private static byte @Nullable [] bodyBytes(HttpResponse<?> response) {
        Object body = response.body();
        if (body instanceof byte[] bytes) {
            return bytes.clone();
        }
        if (body instanceof String text) {
            return text.getBytes(charset(response.headers()));
        }
        return null;
    }

    /** The charset the String body was decoded with (what {@code BodyHandlers.ofString()} uses). */
    private static Charset charset(HttpHeaders headers) {
        String type = headers.firstValue("Content-Type").orElse("");
        for (String part : type.split(";")) {
            String p = part.trim();
            if (p.regionMatches(true, 0, "charset=", 0, 8)) {
                try {
                    return Charset.forName(p.substring(8).replace("\"", "").trim());
                } catch (RuntimeException unknown) {
                    return StandardCharsets.UTF_8;
                }
            }
        }
        return StandardCharsets.UTF_8;
    }

    @Override
    public String toString() {
        return "StaleResponseCache{maxEntries=" + responses.maxSize() + ", maxStaleness=" + responses.maxStaleness()
                + ", staleIfError=" + Duration.ofMillis(defaultStaleIfErrorMillis) + "}";
    }

    /** The Cache-Control directives that matter here; -1 for an absent number. */
    private static final class Directives {
        long maxAge = -1;
        long staleIfError = -1;
        boolean noStore;
        boolean noCache;
        boolean mustRevalidate;

        static Directives of(HttpHeaders headers) {
            Directives d = new Directives();
            for (String value : headers.allValues("Cache-Control")) {
                for (String directive : value.split(",")) {
                    String[] nv = directive.trim().split("=", 2);
                    String name = nv[0].trim().toLowerCase(Locale.ROOT);
                    long number = nv.length == 2 ? seconds(nv[1]) : -1;
                    switch (name) {
                        case "max-age" -> d.maxAge = number;
                        case "stale-if-error" -> d.staleIfError = number;
                        case "no-store" -> d.noStore = true;
                        case "no-cache" -> d.noCache = true;
                        case "must-revalidate", "proxy-revalidate" -> d.mustRevalidate = true;
                        default -> {
                        }
                    }
                }
            }
            return d;
        }

        /** Delta-seconds (RFC 9111 §1.2.2), quoted or not; -1 when invalid. */
        private static long seconds(String raw) {
            String v = raw.trim().replace("\"", "");
            if (v.isEmpty() || v.length() > 10 || !v.chars().allMatch(Character::isDigit)) {
                return -1;
            }
            return Long.parseLong(v);
        }
    }

    /** A stored response served again. */
    private record StaleResponse<T>(Stored stored, HttpHeaders headers, T body) implements HttpResponse<T> {
        @Override
        public int statusCode() {
            return stored.status;
        }

        @Override
        public HttpRequest request() {
            return stored.request;
        }

        @Override
        public Optional<HttpResponse<T>> previousResponse() {
            return Optional.empty();
        }

        @Override
        public Optional<SSLSession> sslSession() {
            return Optional.empty();
        }

        @Override
        public URI uri() {
            return stored.request.uri();
        }

        @Override
        public HttpClient.Version version() {
            return stored.version;
        }

        @Override
        public String toString() {
            return "(stale) " + stored.request.method() + " " + stored.request.uri() + " " + stored.status;
        }
    }

    /** Configuration of a {@link StaleResponseCache}. Not thread-safe; {@link #build()} snapshots it. */
    public static final class Builder {
        private int maxEntries = 1_000;
        private Duration staleIfError = Duration.ZERO;
        private Duration maxStaleness = Duration.ofDays(1);
        private Clock clock = Clock.system();
        private @Nullable String userMessage;

        private Builder() {
        }

        /**
         * When a failed GET has nothing stored fresh enough to serve, end it with a
         * {@link dev.stagger.UserFacingException} carrying {@code userMessage} (shown as is: no
         * internal detail) and when to try again ({@link StaleResponseCache#retryIn}: the last
         * response's {@code Retry-After}, else the breaker's next probe), instead of the error.
         * Default: none, the error is returned or thrown as without a cache. Its kind is "message".
         */
        public Builder userMessage(String userMessage) {
            Checks.notNull("userMessage", userMessage);
            if (userMessage.isBlank()) {
                throw new IllegalArgumentException("userMessage must not be blank");
            }
            this.userMessage = userMessage;
            return this;
        }

        /** URIs kept at most; the least recently used is evicted first. Default 1000. */
        public Builder maxEntries(int maxEntries) {
            this.maxEntries = Checks.atLeast("maxEntries", maxEntries, 1);
            return this;
        }

        /**
         * How long past its freshness a response without its own {@code stale-if-error} may be
         * served. Default zero: only responses whose server allowed it are served stale.
         */
        public Builder staleIfError(Duration staleIfError) {
            this.staleIfError = Checks.nonNegative("staleIfError", staleIfError);
            return this;
        }

        /** The oldest response ever served, whatever its headers allow. Default one day. */
        public Builder maxStaleness(Duration maxStaleness) {
            this.maxStaleness = Checks.positive("maxStaleness", maxStaleness);
            return this;
        }

        /** The clock ages are measured on: the client's ({@link RetryingHttpClient.Builder#clock}) in tests. */
        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        public StaleResponseCache build() {
            return new StaleResponseCache(this);
        }
    }
}
