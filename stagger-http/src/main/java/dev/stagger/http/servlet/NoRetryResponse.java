package dev.stagger.http.servlet;

import dev.stagger.http.StaggerHeaders;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The response of a request under {@link DeadlineFilter}: adds {@code Stagger-No-Retry} when its
 * status becomes an error (5xx or 429) and a Stagger retry has decided, at the moment the status
 * is set, so the header goes out with a response committed by the handler.
 */
final class NoRetryResponse extends HttpServletResponseWrapper {
    private final Supplier<@Nullable String> reason;

    NoRetryResponse(HttpServletResponse response, Supplier<@Nullable String> reason) {
        super(response);
        this.reason = reason;
    }

    /** An error answer carries the signal; a success or a client error (other than 429) does not. */
    static boolean isError(int status) {
        return status >= 500 || status == 429;
    }

    @Override
    public void setStatus(int sc) {
        mark(sc);
        super.setStatus(sc);
    }

    @Override
    public void sendError(int sc) throws IOException {
        mark(sc);
        super.sendError(sc);
    }

    @Override
    public void sendError(int sc, String msg) throws IOException {
        mark(sc);
        super.sendError(sc, msg);
    }

    /** At the end of the chain: marks an error answer still open to headers. */
    void markIfError() {
        if (!isCommitted()) {
            mark(getStatus());
        }
    }

    private void mark(int status) {
        if (!isError(status) || isCommitted() || containsHeader(StaggerHeaders.NO_RETRY)) {
            return;
        }
        String r = reason.get();
        if (r != null) {
            setHeader(StaggerHeaders.NO_RETRY, r);
        }
    }
}
