package dev.stagger.idempotency.servlet;

import dev.stagger.idempotency.internal.Digests;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Names the client of a request that has no authenticated principal (for example from a
 * verified API key or a client certificate), so its keys get a scope of their own.
 *
 * <p>The answer must identify the client to the server only: never derive it from something
 * another client can send (a bare, unverified header), or that client could read the stored
 * responses. Returning one constant for everybody recreates the shared anonymous scope the
 * filter refuses by default. Must be thread-safe.
 */
@FunctionalInterface
public interface ScopeResolver {

    /** @return the client's identity, or empty when the request cannot be attributed to anybody */
    Optional<String> resolve(HttpServletRequest request);

    /** Attributes no request: only authenticated principals get a scope. The default. */
    static ScopeResolver none() {
        return request -> Optional.empty();
    }

    /**
     * Names the client by the API key it sends as {@code Authorization: Bearer <key>} (RFC 6750
     * §2.1), for services that check API keys without a container login. The key must pass
     * {@code isIssued} (look it up among the keys you issued; it is called on every keyed
     * request, so make it cheap or cached); a request with no such header, with two, with a
     * malformed token or with a key {@code isIssued} refuses is not attributed (the filter then
     * answers 400 {@code no-client-scope}).
     *
     * <p>The identity is {@code bearer:} and the key's SHA-256 in hex, never the key itself: the
     * store keeps only a hash of (identity, method, route, idempotency key) in any case, and the
     * identity passed around in memory cannot be replayed as a credential. Keys are high-entropy
     * secrets, so an unsalted hash is enough here; it is not a password hash. A client that
     * rotates its key starts a new scope: repeats of one request must use one key.
     */
    static ScopeResolver bearerToken(Predicate<String> isIssued) {
        if (isIssued == null) {
            throw new NullPointerException("isIssued must not be null");
        }
        Pattern bearer = Pattern.compile("(?i)bearer +([A-Za-z0-9\\-._~+/]+=*)");
        return request -> {
            Enumeration<String> headers = request.getHeaders("Authorization");
            List<String> values = headers == null ? List.of() : Collections.list(headers);
            if (values.size() != 1) {
                return Optional.empty();
            }
            var m = bearer.matcher(values.get(0).trim());
            if (!m.matches() || !isIssued.test(m.group(1))) {
                return Optional.empty();
            }
            return Optional.of("bearer:" + Digests.sha256().add(m.group(1)).hex());
        };
    }
}
