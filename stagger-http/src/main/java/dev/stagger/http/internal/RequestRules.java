package dev.stagger.http.internal;

import dev.stagger.http.IdempotencyKeyMode;
import dev.stagger.http.RetryVerdict;
import dev.stagger.http.StaggerHeaders;
import dev.stagger.http.StatusTable;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A client's rules about a request before it is sent: which methods are idempotent, which carry an
 * {@code Idempotency-Key} (and when one is generated), whether sending the request twice is safe,
 * whether two attempts may be in flight at once (hedging), and whether the server's signals are
 * trusted. One home for them: {@code RetryingHttpClient} plans requests and judges responses with
 * them, whichever transport sends.
 */
public final class RequestRules {
    /** The request header carrying the idempotency key. */
    public static final String KEY_HEADER = "Idempotency-Key";
    private static final Set<String> IDEMPOTENT_METHODS = Set.of("GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE");
    private static final Set<String> KEYED_METHODS = Set.of("POST", "PATCH");
    /** Idempotent, but two in flight at once race: hedged only when the client says so. */
    private static final Set<String> IDEMPOTENT_WRITES = Set.of("PUT", "DELETE");

    private final IdempotencyKeyMode keyMode;
    private final Predicate<URI> keysHonoured;
    private final Predicate<URI> signalsTrusted;
    private final boolean hedgeIdempotentWrites;

    public RequestRules(IdempotencyKeyMode keyMode, Predicate<URI> keysHonoured, Predicate<URI> signalsTrusted,
                        boolean hedgeIdempotentWrites) {
        this.keyMode = keyMode;
        this.keysHonoured = keysHonoured;
        this.signalsTrusted = signalsTrusted;
        this.hedgeIdempotentWrites = hedgeIdempotentWrites;
    }

    /** The method as the rules compare it (upper case). */
    public static String method(String method) {
        return method.toUpperCase(Locale.ROOT);
    }

    /** The request's own key (an RFC 8941 string item's content), if it has one. */
    public static @Nullable String presentKey(Function<String, Optional<String>> requestHeader) {
        return requestHeader.apply(KEY_HEADER).map(RequestRules::unquote).orElse(null);
    }

    /** A new key for an unkeyed request of {@code method}, when the key mode generates one; else null. */
    public @Nullable String newKey(String method) {
        return keyMode == IdempotencyKeyMode.AUTO && KEYED_METHODS.contains(method) ? UUID.randomUUID().toString() : null;
    }

    /** Sending it twice does no harm: an idempotent method, or a key the server is declared to honour. */
    public boolean safe(String method, boolean keyed, URI uri) {
        return IDEMPOTENT_METHODS.contains(method) || keyed && keysHonoured.test(uri);
    }

    /** Under REQUIRE an unkeyed non-idempotent request is retried only after a connect failure. */
    public boolean sendsOnce(String method, boolean keyed) {
        return keyMode == IdempotencyKeyMode.REQUIRE && !keyed && !IDEMPOTENT_METHODS.contains(method);
    }

    /** Whether the server at {@code uri} is trusted to say "do not retry" and the like. */
    public boolean trustsSignals(URI uri) {
        return signalsTrusted.test(uri);
    }

    /** Whether two attempts of a request that is {@code safe} may be in flight at once. */
    public boolean hedgeable(String method, boolean safe) {
        return safe && (hedgeIdempotentWrites || !IDEMPOTENT_WRITES.contains(method));
    }

    /** Whether a request like {@code response}'s is retried on {@code response} and, when not, why. */
    public RetryVerdict verdict(StatusTable statuses, HttpResponse<?> response) {
        HttpRequest request = response.request();
        String method = method(request.method());
        boolean keyed = request.headers().firstValue(KEY_HEADER).isPresent();
        boolean noRetry = trustsSignals(request.uri())
                && response.headers().firstValue(StaggerHeaders.NO_RETRY).isPresent();
        return HttpCall.statusVerdict(statuses, response.statusCode(), safe(method, keyed, request.uri()),
                sendsOnce(method, keyed), noRetry);
    }

    /** An RFC 8941 string item's content: {@code "abc"} → {@code abc}; anything else as given. */
    private static String unquote(String value) {
        String v = value.trim();
        return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
    }
}
