package dev.stagger.shedding.internal;

import dev.stagger.http.StaggerHeaders;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The answer to a shed request: an RFC 9457 problem with a fixed text (computed once, so a shed
 * allocates nothing for its body), the Retry-After in whole seconds and, unless turned off,
 * {@code Stagger-No-Retry: shed}.
 */
public final class ShedResponse {
    /** The problem type of every shed response. */
    public static final String TYPE = "urn:stagger:shedding:overloaded";

    private final int status;
    private final byte[] body;
    private final boolean noRetry;

    public ShedResponse(int status, boolean noRetry) {
        this.status = status;
        this.noRetry = noRetry;
        String title = status == 429 ? "Too Many Requests" : "Service Unavailable";
        this.body = ("{\"type\":\"" + TYPE + "\",\"title\":\"" + title + "\",\"status\":" + status
                + ",\"detail\":\"The server is at its concurrency limit and did not run this request;"
                + " retry after the number of seconds in Retry-After.\"}").getBytes(StandardCharsets.UTF_8);
    }

    public int status() {
        return status;
    }

    public void write(HttpServletResponse response, long retryAfterSeconds) throws IOException {
        response.setStatus(status);
        response.setHeader("Retry-After", Long.toString(retryAfterSeconds));
        if (noRetry) {
            // compile-time constants: stagger-http need not be present at run time
            response.setHeader(StaggerHeaders.NO_RETRY, StaggerHeaders.SHED);
        }
        response.setHeader("Cache-Control", "no-store");
        response.setContentType("application/problem+json");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
