package dev.stagger.shedding.overload;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A real Jetty on 127.0.0.1 (port 0) serving one endpoint of fixed capacity: a request takes one
 * of {@code permits} (a fair semaphore, so waiting requests queue in arrival order) and holds it
 * for {@code serviceTime}; capacity is {@code permits / serviceTime} requests per second. Filters
 * run in the given order in front of it. The handler's wait is the load being modelled — work
 * the server does — not a test waiting for time to pass.
 */
public final class CapacityServer implements AutoCloseable {
    private static final byte[] OK = "ok".getBytes(StandardCharsets.US_ASCII);

    private final Server server;
    private final URI uri;
    private final int permits;
    private final Duration serviceTime;
    private final LongAdder served = new LongAdder();

    private CapacityServer(int permits, Duration serviceTime, int threads, Filter... filters) throws Exception {
        this.permits = permits;
        this.serviceTime = serviceTime;
        QueuedThreadPool pool = new QueuedThreadPool(threads, 8);
        pool.setName("capacity-server");
        pool.setStopTimeout(1_000);
        this.server = new Server(pool);
        server.setStopTimeout(0); // no graceful drain: queued work is abandoned, blocked handlers interrupted
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        connector.setAcceptQueueSize(1024);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        for (Filter f : filters) {
            context.addFilter(new FilterHolder(f), "/*", EnumSet.of(DispatcherType.REQUEST));
        }
        Semaphore capacity = new Semaphore(permits, true);
        long serviceNanos = serviceTime.toNanos();
        context.addServlet(new ServletHolder(new HttpServlet() {
            private static final long serialVersionUID = 1L;

            @Override
            protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
                try {
                    capacity.acquire();
                    try {
                        TimeUnit.NANOSECONDS.sleep(serviceNanos);
                    } finally {
                        capacity.release();
                    }
                } catch (InterruptedException stopping) {
                    Thread.currentThread().interrupt();
                    res.setStatus(500);
                    return;
                }
                served.increment();
                res.setStatus(200);
                res.setContentType("text/plain");
                res.setContentLength(OK.length);
                res.getOutputStream().write(OK);
            }
        }), "/*");
        server.setHandler(context);
        server.start();
        this.uri = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/work");
    }

    /** Starts a server with {@code permits} requests at a time, each taking {@code serviceTime}. */
    public static CapacityServer start(int permits, Duration serviceTime, Filter... filters) throws Exception {
        return new CapacityServer(permits, serviceTime, 256, filters);
    }

    public URI uri() {
        return uri;
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
    public void close() throws Exception {
        server.stop();
    }
}
