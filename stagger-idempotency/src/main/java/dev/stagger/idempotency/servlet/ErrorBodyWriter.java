package dev.stagger.idempotency.servlet;

import dev.stagger.idempotency.IdempotencyOutcome;
import dev.stagger.idempotency.internal.Problems;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Writes the body of the filter's own error answers (400, 409, 413, 422, 503), for APIs that
 * answer errors in their own format (a Stripe-shaped {@code {"error": {...}}}, say). The default
 * writes RFC 9457 problem details.
 *
 * <p>When it is called, the filter has set the status and, for 409 and 503, {@code Retry-After};
 * the writer sets the content type and writes the body, and may change the status (Stripe answers
 * a reused key with 400). It must not echo the key or anything else the client sent, and must be
 * thread-safe.
 */
@FunctionalInterface
public interface ErrorBodyWriter {

    /**
     * @param outcome one of the error outcomes ({@link IdempotencyOutcome#isError()})
     * @param request the request that was refused; its body may not be readable any more
     */
    void write(IdempotencyOutcome outcome, HttpServletRequest request, HttpServletResponse response) throws IOException;

    /**
     * RFC 9457 {@code application/problem+json} with a {@code type} of
     * {@code urn:stagger:idempotency:<kind>} and fixed texts. The default.
     */
    static ErrorBodyWriter problemDetails() {
        return (outcome, request, response) -> Problems.of(outcome).writeBody(response);
    }
}
