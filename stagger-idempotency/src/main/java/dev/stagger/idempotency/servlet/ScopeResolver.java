package dev.stagger.idempotency.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Optional;

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
}
