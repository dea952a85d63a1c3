package dev.stagger.shedding.overload;

import jakarta.servlet.Filter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link LoopbackServer} whose one endpoint has a fixed capacity: a request takes one of
 * {@code permits} (a fair semaphore, so waiting requests queue in arrival order) and holds it for
 * {@code serviceTime}; capacity is {@code permits / serviceTime} requests per second. The
 * handler's wait is the load being modelled — work the server does — not a test waiting for time
 * to pass. Jetty has 256 threads: without a filter, requests beyond that queue in Jetty.
 */
public final class CapacityServer implements AutoCloseable {
    private static final byte[] OK = "ok".getBytes(StandardCharsets.US_ASCII);

    private final LoopbackServer server;
    private final int permits;
    private final Duration serviceTime;
    private final LongAdder served;

    private CapacityServer(LoopbackServer server, int permits, Duration serviceTime, LongAdder served) {
        this.server = server;
        this.permits = permits;
        this.serviceTime = serviceTime;
        this.served = served;
    }

    /** Starts a server with {@code permits} requests at a time, each taking {@code serviceTime}. */
    public static CapacityServer start(int permits, Duration serviceTime, Filter... filters) throws Exception {
        Semaphore capacity = new Semaphore(permits, true);
        long serviceNanos = serviceTime.toNanos();
        LongAdder served = new LongAdder();
        LoopbackServer server = LoopbackServer.start((request, response) -> {
            try {
                capacity.acquire();
                try {
                    TimeUnit.NANOSECONDS.sleep(serviceNanos);
                } finally {
                    capacity.release();
                }
            } catch (InterruptedException stopping) {
                Thread.currentThread().interrupt();
                response.setStatus(500);
                return;
            }
            served.increment();
            response.setStatus(200);
            response.setContentType("text/plain");
            response.setContentLength(OK.length);
            response.getOutputStream().write(OK);
        }, filters);
        return new CapacityServer(server, permits, serviceTime, served);
    }

    public URI uri() {
        return server.uri("/work");
    }

    /** Requests per second the handler can complete. */
    public double capacityPerSecond() {
        return permits / (serviceTime.toNanos() / 1e9);
    }

    public Duration serviceTime() {
        return serviceTime;
    }

    /** Requests the handler completed (whether or not their client was still waiting). */
    public long served() {
        return served.sum();
    }

    @Override
    public void close() {
        server.close();
    }
}
