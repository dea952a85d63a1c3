package dev.stagger.http.internal;

import dev.stagger.Clock;
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
 * connection. A publisher is cancelled. A drain that has not finished after {@link #DRAIN_TIMEOUT_NANOS}
 * (a server that sent error headers and then stalled its body) is cut short by closing the
 * stream from the clock's timer, so a stalled body cannot hold up the retry.
 */
public final class ResponseBodies {
    /** Bytes read from a streamed error body before giving up on reusing its connection. */
    public static final int DRAIN_LIMIT = 64 * 1024;
    /** How long a drain may take before the stream is closed under it: one second. */
    public static final long DRAIN_TIMEOUT_NANOS = 1_000_000_000L;

    private ResponseBodies() {
    }

    /**
     * Releases {@code response}'s body if it holds a connection; never throws.
     *
     * @param clock schedules the close that cuts a stalled drain short
     */
    public static void discard(Object response, Clock clock) {
        if (!(response instanceof HttpResponse<?> r)) {
            return;
        }
        Object body = r.body();
        try {
            if (body instanceof InputStream in) {
                Clock.Cancellable watchdog = clock.schedule(() -> closeQuietly(in), DRAIN_TIMEOUT_NANOS);
                try (in) {
                    drain(in);
                } finally {
                    watchdog.cancel();
                }
            } else if (body instanceof BaseStream<?, ?> stream) {
                stream.close();
            } else if (body instanceof Flow.Publisher<?> publisher) {
                publisher.subscribe(new Cancelling());
            } else if (body instanceof AutoCloseable closeable) {
                closeable.close();
            }
        } catch (RuntimeException ignored) {
            // the body is being thrown away; a failure to read it changes nothing for the caller
        } catch (Exception ignored) {
            // likewise for a checked one (reading the stream, or AutoCloseable.close)
        }
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close(); // a read blocked in another thread ends with an IOException
        } catch (IOException ignored) {
            // closing is all that is wanted
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
