package dev.stagger.idempotency.internal;

import dev.stagger.idempotency.IdempotencyOutcome;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * RFC 9457 problem details written by the filter. Details are fixed texts: nothing the client sent
 * (a hostile key, say) is echoed back.
 */
public enum Problems {
    KEY_MISSING(400, "key-missing", "Idempotency-Key required",
            "This request must carry an Idempotency-Key header."),
    KEY_INVALID(400, "key-invalid", "Invalid Idempotency-Key",
            "Send exactly one Idempotency-Key: an RFC 8941 string of 1-255 characters from [A-Za-z0-9-_.:~+/=]."),
    NO_CLIENT_SCOPE(400, "no-client-scope", "Idempotency-Key without a client identity",
            "The server cannot tell which client sent this key; authenticate to use idempotency keys."),
    BODY_TOO_LARGE(413, "body-too-large", "Request body too large for an idempotent request",
            "The request body exceeds the size the server fingerprints for idempotency keys."),
    IN_FLIGHT(409, "in-flight", "Request with this Idempotency-Key is in progress",
            "A request with this key is still being processed; retry after the indicated delay."),
    KEY_REUSED(422, "key-reused", "Idempotency-Key reused for a different request",
            "This key was already used for a request with a different method, path, query, headers or body."),
    STORE_UNAVAILABLE(503, "store-unavailable", "Idempotency store unavailable",
            "The request was not executed because its idempotency key could not be recorded; retry later.");

    /** Prefix of every problem type URI. */
    public static final String TYPE_PREFIX = "urn:stagger:idempotency:";

    private final int status;
    private final String type;
    private final byte[] body;

    Problems(int status, String type, String title, String detail) {
        this.status = status;
        this.type = TYPE_PREFIX + type;
        this.body = ("{\"type\":\"" + this.type + "\",\"title\":\"" + title + "\",\"status\":" + status
                + ",\"detail\":\"" + detail + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    /** The problem answering an error outcome. */
    public static Problems of(IdempotencyOutcome outcome) {
        if (!outcome.isError()) {
            throw new IllegalArgumentException("outcome must be an error, got " + outcome);
        }
        return valueOf(outcome.name());
    }

    /** Writes the content type and the body; the status is set by the caller. */
    public void writeBody(HttpServletResponse response) throws IOException {
        response.setContentType("application/problem+json");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
