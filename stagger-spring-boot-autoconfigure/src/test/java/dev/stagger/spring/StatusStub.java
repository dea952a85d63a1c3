package dev.stagger.spring;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A downstream on loopback that answers every request with one status (after {@link #unavailable}
 * 503s), counts the requests and keeps the {@code traceparent} each carried.
 */
final class StatusStub implements AutoCloseable {
    final AtomicInteger requests = new AtomicInteger();
    final List<String> traceparents = new CopyOnWriteArrayList<>();
    volatile int status = 200;
    /** How many of the next requests get 503 before {@link #status}. */
    final AtomicInteger unavailable = new AtomicInteger();
    private final HttpServer server;

    private StatusStub() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            requests.incrementAndGet();
            String traceparent = exchange.getRequestHeaders().getFirst("traceparent");
            traceparents.add(traceparent == null ? "none" : traceparent);
            exchange.sendResponseHeaders(unavailable.getAndDecrement() > 0 ? 503 : status, -1);
            exchange.close();
        });
        server.start();
    }

    static StatusStub start() throws IOException {
        return new StatusStub();
    }

    String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
