package dev.stagger.idempotency;

import dev.stagger.idempotency.internal.Digests;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What makes two requests "the same request": SHA-256 over the method, path, query, selected
 * headers (by default the content type) and body. A repeat that reuses a key with a different
 * fingerprint is a client bug (or an attack) and gets 422 instead of someone else's response.
 *
 * <p>Fields are length-prefixed before hashing, so moving bytes between fields changes the hash.
 * Header names are compared case-insensitively and in sorted order. Immutable.
 */
public final class RequestFingerprint {
    private final String hex;

    private RequestFingerprint(String hex) {
        this.hex = hex;
    }

    /**
     * @param headers the selected headers (name to value; a missing header is simply absent)
     * @param body the full request body, possibly empty
     */
    public static RequestFingerprint of(String method, String path, String query, Map<String, String> headers,
                                        byte[] body) {
        return of(method, path, query, headers, body, body.length);
    }

    /** As {@link #of(String, String, String, Map, byte[])} over the first {@code bodyLength} bytes of {@code body}. */
    public static RequestFingerprint of(String method, String path, String query, Map<String, String> headers,
                                        byte[] body, int bodyLength) {
        return new RequestFingerprint(digest(method, path, query, headers, body, bodyLength).hex());
    }

    /**
     * The fingerprint of a form request whose body the container parsed into parameters (so the
     * raw form body can no longer be read): the parameters take the body's place. Names are
     * compared in sorted order, the values of one name in the order sent.
     *
     * @param parameters the container's parameter map ({@code getParameterMap()}), query
     *     parameters included
     * @param body what was left of the body after the container parsed it, usually nothing
     */
    public static RequestFingerprint ofForm(String method, String path, String query, Map<String, String> headers,
                                            Map<String, String[]> parameters, byte[] body, int bodyLength) {
        if (parameters == null) {
            throw new NullPointerException("parameters must not be null");
        }
        Digests d = digest(method, path, query, headers, body, bodyLength);
        Map<String, String[]> sorted = new TreeMap<>(parameters);
        d.add("form").add(Integer.toString(sorted.size()));
        sorted.forEach((name, values) -> {
            d.add(name).add(Integer.toString(values.length));
            for (String value : values) {
                d.add(value);
            }
        });
        return new RequestFingerprint(d.hex());
    }

    private static Digests digest(String method, String path, String query, Map<String, String> headers,
                                  byte[] body, int bodyLength) {
        if (method == null || path == null || headers == null || body == null) {
            throw new NullPointerException("method, path, headers and body must not be null");
        }
        if (bodyLength < 0 || bodyLength > body.length) {
            throw new IllegalArgumentException("bodyLength must be 0.." + body.length + ", got " + bodyLength);
        }
        Map<String, String> sorted = new TreeMap<>();
        headers.forEach((name, value) -> sorted.put(name.toLowerCase(Locale.ROOT), value));
        Digests d = Digests.sha256().add(method.toUpperCase(Locale.ROOT)).add(path).add(query);
        d.add(Integer.toString(sorted.size()));
        sorted.forEach((name, value) -> d.add(name).add(value));
        return d.add(body, 0, bodyLength);
    }

    /** Restores a fingerprint read from a store. */
    public static RequestFingerprint fromHex(String hex) {
        if (hex == null || !hex.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("hex must be 64 lowercase hex digits, got '" + hex + "'");
        }
        return new RequestFingerprint(hex);
    }

    /** The SHA-256 as 64 lowercase hex digits. */
    public String hex() {
        return hex;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RequestFingerprint && ((RequestFingerprint) o).hex.equals(hex);
    }

    @Override
    public int hashCode() {
        return hex.hashCode();
    }

    @Override
    public String toString() {
        return "RequestFingerprint{" + hex + "}";
    }
}
