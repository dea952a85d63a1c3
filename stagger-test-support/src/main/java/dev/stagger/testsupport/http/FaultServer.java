package dev.stagger.testsupport.http;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.ConnectionStatistics;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * A scripted fault server for HTTP clients: Jetty on 127.0.0.1 (ephemeral port) answering each
 * request with the next scripted step or, when the script is empty, the default step (200 unless
 * {@link #otherwise} says). It records what each request carried and counts the connections open
 * server-side, so a client that holds a connection it should have released shows in the count.
 * Thread-safe: the script and the records are concurrent collections.
 */
public final class FaultServer implements AutoCloseable {

    /** What the server received. */
    public record Received(String method, String path, String idempotencyKey, String requestId, String body,
                    String attemptHeader, String deadlineHeader) {
    }

    /** One scripted answer. */
    public interface Step {
        void answer(Request request, Response response, Callback callback) throws Exception;
    }

    private final Server server = new Server();
    private final ServerConnector connector = new ServerConnector(server);
    private final ConnectionStatistics connections = new ConnectionStatistics();
    private final ConcurrentLinkedQueue<Step> script = new ConcurrentLinkedQueue<>();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private volatile Step fallback = status(200, "ok");
    private final CountDownLatch closing = new CountDownLatch(1);

    public FaultServer() throws Exception {
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        connector.addBean(connections);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                String body = Content.Source.asString(request);
                received.add(new Received(request.getMethod(), request.getHttpURI().getPath(),
                        request.getHeaders().get("Idempotency-Key"), request.getHeaders().get("X-Request-Id"), body,
                        request.getHeaders().get("Stagger-Attempt"), request.getHeaders().get("Stagger-Deadline-Ms")));
                Step step = script.poll();
                (step != null ? step : fallback).answer(request, response, callback);
                return true;
            }
        });
        server.start();
    }

    public URI uri(String path) {
        return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
    }

    /** Queues {@code steps}, answered in order by the next requests. */
    public FaultServer then(Step... steps) {
        script.addAll(List.of(steps));
        return this;
    }

    /** The answer once the script is used up. */
    public FaultServer otherwise(Step step) {
        fallback = step;
        return this;
    }

    public List<Received> received() {
        return List.copyOf(received);
    }

    /** Connections open right now, server side. */
    public long openConnections() {
        return connections.getConnections();
    }

    /** Connections ever accepted. */
    public long acceptedConnections() {
        return connections.getConnectionsTotal();
    }

    /** Answers {@code status} with a short body (long enough that an unread one is noticed). */
    public static Step status(int status, String body) {
        return status(status, Map.of(), body);
    }

    public static Step status(int status, Map<String, String> headers, String body) {
        return (request, response, callback) -> {
            response.setStatus(status);
            headers.forEach((k, v) -> response.getHeaders().put(k, v));
            response.getHeaders().put("Content-Type", "text/plain");
            response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
        };
    }

    public static Step retryAfter(int status, String retryAfter) {
        return status(status, Map.of("Retry-After", retryAfter), "busy");
    }

    /** Promises a 1000-byte body, sends 10 bytes, then drops the connection: the request was processed. */
    public static Step dropMidResponse() {
        return (request, response, callback) -> {
            response.setStatus(200);
            response.getHeaders().put("Content-Length", "1000");
            response.write(false, ByteBuffer.wrap("0123456789".getBytes(StandardCharsets.UTF_8)), Callback.from(() -> {
                request.getConnectionMetaData().getConnection().getEndPoint().close();
                callback.failed(new IOException("dropped on purpose"));
            }, callback::failed));
        };
    }

    /**
     * Answers {@code status} only once the server is closing (at most 30 s later): a response that
     * no request timeout can wait for, however slowly a loaded machine runs the rest of the test.
     */
    public Step stall(int status) {
        return (request, response, callback) -> {
            closing.await(30, TimeUnit.SECONDS);
            status(status, "late").answer(request, response, callback);
        };
    }

    /** Stops the server, waiting 10 s at most ({@link JettyStop}). */
    @Override
    public void close() throws Exception {
        closing.countDown();
        JettyStop.stop(server);
    }
}
