package dev.stagger.spring;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;

/** A downstream on loopback that answers every request with one status and counts the requests. */
final class StatusStub implements AutoCloseable {
    final AtomicInteger requests = new AtomicInteger();
    volatile int status = 200;
    private final HttpServer server;

    private StatusStub() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            requests.incrementAndGet();
            exchange.sendResponseHeaders(status, -1);
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
