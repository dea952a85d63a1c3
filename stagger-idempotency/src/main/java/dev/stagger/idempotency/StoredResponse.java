package dev.stagger.idempotency;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A response kept for replay: status, a safe subset of headers and the body bytes exactly as
 * sent. Only headers that describe the resource (content type, location, ...) are kept; never
 * cookies or anything that belongs to one connection or session. Immutable: the body is copied
 * in and out.
 */
public final class StoredResponse {
    private final int status;
    private final Map<String, List<String>> headers;
    private final byte[] body;

    private StoredResponse(int status, Map<String, List<String>> headers, byte[] body) {
        this.status = status;
        this.headers = headers;
        this.body = body;
    }

    /**
     * @param headers header name to values, in the order to replay them
     * @throws IllegalArgumentException when the status is not 100-599 or a header contains CR or LF
     */
    public static StoredResponse of(int status, Map<String, List<String>> headers, byte[] body) {
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("status must be 100-599, got " + status);
        }
        if (headers == null || body == null) {
            throw new NullPointerException("headers and body must not be null");
        }
        Map<String, List<String>> copy = new LinkedHashMap<>();
        headers.forEach((name, values) -> {
            checkHeaderText("header name", name);
            values.forEach(v -> checkHeaderText("header " + name, v));
            copy.put(name, Collections.unmodifiableList(new ArrayList<>(values)));
        });
        return new StoredResponse(status, Collections.unmodifiableMap(copy), body.clone());
    }

    private static void checkHeaderText(String field, String text) {
        if (text == null || text.indexOf('\r') >= 0 || text.indexOf('\n') >= 0) {
            throw new IllegalArgumentException(field + " must be non-null without CR or LF, got '" + text + "'");
        }
    }

    public int status() {
        return status;
    }

    /** Header name to values, unmodifiable, in replay order. */
    public Map<String, List<String>> headers() {
        return headers;
    }

    /** A copy of the body. */
    public byte[] body() {
        return body.clone();
    }

    public int bodyLength() {
        return body.length;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof StoredResponse)) {
            return false;
        }
        StoredResponse other = (StoredResponse) o;
        return status == other.status && headers.equals(other.headers) && Arrays.equals(body, other.body);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * status + headers.hashCode()) + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "StoredResponse{status=" + status + ", headers=" + headers + ", body=" + body.length + " bytes}";
    }
}
