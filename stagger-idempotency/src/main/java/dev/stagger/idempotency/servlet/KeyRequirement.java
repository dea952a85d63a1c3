package dev.stagger.idempotency.servlet;

import java.util.Locale;

/**
 * Decides, per method and route, whether a request needs an {@code Idempotency-Key}.
 * Must be thread-safe and cheap: it runs on every request.
 */
@FunctionalInterface
public interface KeyRequirement {

    KeyPolicy policy(String method, String route);

    /**
     * The default: POST and PATCH (not idempotent by themselves) require a key; PUT and DELETE
     * honour one when sent; GET, HEAD, OPTIONS and the rest are left alone.
     */
    static KeyRequirement defaults() {
        return (method, route) -> {
            switch (method.toUpperCase(Locale.ROOT)) {
                case "POST":
                case "PATCH":
                    return KeyPolicy.REQUIRED;
                case "PUT":
                case "DELETE":
                    return KeyPolicy.OPTIONAL;
                default:
                    return KeyPolicy.IGNORED;
            }
        };
    }
}
