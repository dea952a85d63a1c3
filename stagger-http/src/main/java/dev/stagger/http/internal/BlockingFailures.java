package dev.stagger.http.internal;

import java.io.IOException;
import java.io.InterruptedIOException;

/**
 * What a blocking client integration (OkHttp, Apache HttpClient, Feign) throws when
 * {@code RetryingHttpClient.execute} ends in a failure, where the library's API declares only
 * {@link IOException}: one rule for every such integration.
 */
public final class BlockingFailures {
    private BlockingFailures() {
    }

    /**
     * {@code failure} as such an API throws it: an {@link IOException} as it is, an unchecked one
     * rethrown here, an {@link InterruptedException} as an {@link InterruptedIOException} with the
     * thread's interrupt status set again, anything else wrapped.
     */
    public static IOException asIOException(Exception failure) {
        if (failure instanceof IOException io) {
            return io;
        }
        if (failure instanceof RuntimeException unchecked) {
            throw unchecked;
        }
        if (failure instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            InterruptedIOException interrupted = new InterruptedIOException("interrupted while waiting to retry");
            interrupted.initCause(failure);
            return interrupted;
        }
        return new IOException(failure);
    }
}
