package dev.stagger.http;

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
 * A Jetty server on 127.0.0.1 (ephemeral port) that answers from a script: each request takes the
 * next step from the queue, or the default step when the queue is empty. It records what each
 * request carried and counts open connections.
 */
final class ScriptedServer implements AutoCloseable {

    /** What the server received. */
    record Received(String method, String path, String idempotencyKey, String requestId, String body,
                    String attemptHeader, String deadlineHeader) {
    }

    /** One scripted answer. */
    interface Step {
        void answer(Request request, Response response, Callback callback) throws Exception;
    }

    private final Server server = new Server();
    private final ServerConnector connector = new ServerConnector(server);
    private final ConnectionStatistics connections = new ConnectionStatistics();
    private final ConcurrentLinkedQueue<Step> script = new ConcurrentLinkedQueue<>();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private volatile Step fallback = status(200, "ok");
    private final CountDownLatch closing = new CountDownLatch(1);

    ScriptedServer() throws Exception {
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

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
    }

    ScriptedServer then(Step... steps) {
        script.addAll(List.of(steps));
        return this;
    }

    ScriptedServer otherwise(Step step) {
        fallback = step;
        return this;
    }

    List<Received> received() {
        return List.copyOf(received);
    }

    /** Connections open right now, server side. */
    long openConnections() {
        return connections.getConnections();
    }

    /** Connections ever accepted. */
    long acceptedConnections() {
        return connections.getConnectionsTotal();
    }

    static Step status(int status, String body) {
        return status(status, Map.of(), body);
    }

    static Step status(int status, Map<String, String> headers, String body) {
        return (request, response, callback) -> {
            response.setStatus(status);
            headers.forEach((k, v) -> response.getHeaders().put(k, v));
            response.getHeaders().put("Content-Type", "text/plain");
            response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
        };
    }

    static Step retryAfter(int status, String retryAfter) {
        return status(status, Map.of("Retry-After", retryAfter), "busy");
    }

    /** Promises a 1000-byte body, sends 10 bytes, then drops the connection. */
    static Step closeMidResponse() {
        return (request, response, callback) -> {
            response.setStatus(200);
            response.getHeaders().put("Content-Length", "1000");
            response.write(false, ByteBuffer.wrap("0123456789".getBytes(StandardCharsets.UTF_8)), Callback.from(() -> {
                request.getConnectionMetaData().getConnection().getEndPoint().close();
                callback.failed(new java.io.IOException("dropped on purpose"));
            }, callback::failed));
        };
    }

    /**
     * Answers {@code status} only once the server is closing (at most 30 s later): a response that
     * no request timeout can wait for, however slowly a loaded machine runs the rest of the test.
     */
    Step stall(int status) {
        return (request, response, callback) -> {
            closing.await(30, TimeUnit.SECONDS);
            status(status, "late").answer(request, response, callback);
        };
    }

    @Override
    public void close() throws Exception {
        closing.countDown();
        server.stop();
    }
}
