package dev.stagger.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.support.Http;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.testing.VirtualClock;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client creating an order through a flaky path: a 503 from the front, a 503 from the
 * application, then a connection dropped after the order was made. Stagger's HTTP client retries
 * with the one Idempotency-Key it generated for the call, and exactly one order exists at the end.
 */
class RetriedOrderEndToEndTest {
    @TempDir
    Path dir;

    private final AtomicInteger orders = new AtomicInteger();
    private final AtomicInteger arrivals = new AtomicInteger();
    private final List<String> keysSeen = new CopyOnWriteArrayList<>();

    @Test
    void aPostRetriedThroughFailuresAndADroppedConnectionCreatesExactlyOneOrder() throws Exception {
        TestServer.Handler orderService = (req, res) -> {
            String body = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (arrivals.get() == 2) {
                res.setStatus(503); // the payment provider was down: nothing created
                return;
            }
            int id = orders.incrementAndGet();
            res.setStatus(201);
            res.setContentType("application/json");
            res.getOutputStream().write(("{\"order\":" + id + ",\"for\":" + body + "}").getBytes(StandardCharsets.UTF_8));
        };
        try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(dir.resolve("keys.db"));
             TestServer server = TestServer.start(orderService, new FaultInjection(),
                IdempotencyFilter.builder(store).build())) {
            // the client generates one Idempotency-Key for the call and sends it on every attempt; the filter
            // honours keys, so a retry after the dropped connection is safe
            RetryingHttpClient client = RetryingHttpClient.builder(Http.CLIENT)
                    .service("orders")
                    .keysHonoured(uri -> true)
                    .policy(RetryPolicy.builder().maxAttempts(6).backoff(Backoff.fixed(Duration.ofMillis(20))).build())
                    .clock(new VirtualClock())
                    .build();

            HttpResponse<byte[]> response = client.send(Http.post(server.uri("/orders"), null, "alice", "{\"item\":\"book\"}"),
                    HttpResponse.BodyHandlers.ofByteArray());

            assertThat(orders).hasValue(1);
            assertThat(arrivals).hasValue(4);
            assertThat(keysSeen).hasSize(4).doesNotContainNull().containsOnly(keysSeen.get(0));
            assertThat(keysSeen.get(0)).matches("\"[0-9a-f-]{36}\"");
            assertThat(response.statusCode()).isEqualTo(201);
            assertThat(response.headers().firstValue("Idempotent-Replayed")).contains("true");
            assertThat(new String(response.body(), StandardCharsets.UTF_8)).isEqualTo("{\"order\":1,\"for\":{\"item\":\"book\"}}");
        }
    }

    /**
     * Arrival 1: a 503 from in front of the application (a proxy with no healthy backend).
     * Arrival 3: the application runs, but the connection drops before the response is sent.
     */
    private final class FaultInjection implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
            keysSeen.add(((jakarta.servlet.http.HttpServletRequest) req).getHeader("Idempotency-Key"));
            int arrival = arrivals.incrementAndGet();
            if (arrival == 1) {
                ((HttpServletResponse) res).sendError(503);
                return;
            }
            if (arrival == 3) {
                chain.doFilter(req, new Blackhole((HttpServletResponse) res));
                ServletContextRequest.getServletContextRequest(req).getConnectionMetaData().getConnection()
                        .getEndPoint().close();
                return;
            }
            chain.doFilter(req, res);
        }
    }

    /** Swallows the body so nothing reaches the client before the connection is cut (status and headers are never committed). */
    private static final class Blackhole extends HttpServletResponseWrapper {
        private final ServletOutputStream nowhere = new ServletOutputStream() {
            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener listener) {
                // never used: writes complete at once
            }

            @Override
            public void write(int b) {
                // dropped
            }
        };

        Blackhole(HttpServletResponse response) {
            super(response);
        }

        @Override
        public ServletOutputStream getOutputStream() {
            return nowhere;
        }

        @Override
        public PrintWriter getWriter() {
            return new PrintWriter(OutputStream.nullOutputStream());
        }
    }
}
