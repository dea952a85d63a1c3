package dev.stagger.http.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.util.concurrent.Flow;
import java.util.stream.BaseStream;

/**
 * Releases the body of a response nobody will read (a retried 503, say), so its connection goes
 * back to the pool or is closed instead of being held until the process ends.
 *
 * <p>Bodies already read into memory or a file (String, byte[], Path, Void) need nothing. A stream
 * is drained up to {@link #DRAIN_LIMIT} bytes, so that a small error body lets the connection be
 * reused, then closed; a longer body is cut short by the close, which makes the client drop that
 * connection. A publisher is cancelled.
 */
public final class ResponseBodies {
    /** Bytes read from a streamed error body before giving up on reusing its connection. */
    public static final int DRAIN_LIMIT = 64 * 1024;

    private ResponseBodies() {
    }

    /** Releases {@code response}'s body if it holds a connection; never throws. */
    public static void discard(Object response) {
        if (!(response instanceof HttpResponse<?> r)) {
            return;
        }
        Object body = r.body();
        try {
            if (body instanceof InputStream in) {
                try (in) {
                    drain(in);
                }
            } else if (body instanceof BaseStream<?, ?> stream) {
                stream.close();
            } else if (body instanceof Flow.Publisher<?> publisher) {
                publisher.subscribe(new Cancelling());
            } else if (body instanceof AutoCloseable closeable) {
                closeable.close();
            }
        } catch (Exception ignored) {
            // the body is being thrown away; a failure to read it changes nothing for the caller
        }
    }

    private static void drain(InputStream in) throws IOException {
        byte[] buffer = new byte[8192];
        int total = 0;
        int n;
        while (total < DRAIN_LIMIT && (n = in.read(buffer)) >= 0) {
            total += n;
        }
    }

    private static final class Cancelling implements Flow.Subscriber<Object> {
        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            subscription.cancel();
        }

        @Override
        public void onNext(Object item) {
        }

        @Override
        public void onError(Throwable throwable) {
        }

        @Override
        public void onComplete() {
        }
    }
}
