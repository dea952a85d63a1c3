package dev.stagger.idempotency;

import dev.stagger.idempotency.internal.Digests;

/**
 * Where a key lives: (client, method, route, key). Two requests share a stored response only if
 * all four match, so one client can never read a response stored for another, even when it guesses
 * or steals the other's key (IETF draft §5).
 *
 * <p>Stores see only {@link #id()}, a SHA-256 of the four parts: client identities are not
 * written to the database in clear, and the id has a fixed length whatever the route.
 *
 * @param client who is asking: the authenticated principal, or what a scope resolver answered;
 *     never blank
 * @param method the HTTP method, upper case
 * @param route the route template where known, else the request path
 * @param key the idempotency key
 */
public record IdempotencyScope(String client, String method, String route, IdempotencyKey key) {

    public IdempotencyScope {
        if (client == null || client.isBlank()) {
            throw new IllegalArgumentException("client must not be blank, got '" + client + "'");
        }
        if (method == null || method.isBlank()) {
            throw new IllegalArgumentException("method must not be blank, got '" + method + "'");
        }
        if (route == null) {
            throw new NullPointerException("route must not be null");
        }
        if (key == null) {
            throw new NullPointerException("key must not be null");
        }
    }

    /** The store key: 64 hex digits. */
    public String id() {
        return Digests.sha256().add(client).add(method).add(route).add(key.value()).hex();
    }
}
