package dev.stagger.conformance;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.io.ConnectionStatistics;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * The one scripted fault server every client of the suite runs against: Jetty on 127.0.0.1
 * (ephemeral port), answering each request with the next scripted step or, when the script is
 * empty, 200. It records what each request carried and counts the connections open server-side, so
 * a client that holds a connection it should have released shows in the count.
 */
public final class FaultServer implements AutoCloseable {

    /** What the server received. */
    public record Received(String method, String path, String idempotencyKey, String attempt, String body) {
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
                        request.getHeaders().get("Idempotency-Key"), request.getHeaders().get("Stagger-Attempt"), body));
                Step step = script.poll();
                (step != null ? step : status(200, "ok")).answer(request, response, callback);
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

    public List<Received> received() {
        return List.copyOf(received);
    }

    /** Connections open right now, server side. */
    public long openConnections() {
        return connections.getConnections();
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

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
