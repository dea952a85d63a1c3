package dev.stagger.idempotency.servlet;

import dev.stagger.idempotency.IdempotencyCompletion;
import dev.stagger.idempotency.IdempotencyListener;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.jdbc.UrlDataSource;
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
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;

/**
 * A Jetty with the idempotency filter on PostgreSQL, run in a JVM of its own by
 * {@link CrashAtEveryPointTest}, which kills it: the JVM halts itself ({@link Runtime#halt}, as
 * abrupt as {@code kill -9}: no shutdown hooks, no finally blocks, sockets closed by the kernel)
 * at the named point of the first keyed request.
 *
 * <p>Arguments: JDBC URL, user, password, table prefix, {@code transactional} or {@code plain},
 * and the crash point: {@code none}, {@code before-effect}, {@code after-effect} (the handler's
 * insert done, the response not yet stored), {@code after-commit} (the response stored, no byte
 * sent) or {@code mid-response} (half the body sent and flushed). The handler's effect is one row
 * in {@code <prefix>effects}: through the request's transaction when transactional, in auto-commit
 * on a connection of its own when plain. Prints {@code PORT <n>} once it serves.
 */
public final class CrashingServer {
    private CrashingServer() {
    }

    public static void main(String[] args) throws Exception {
        UrlDataSource ds = UrlDataSource.of(args[0], args[1], args[2]);
        String prefix = args[3];
        boolean transactional = "transactional".equals(args[4]);
        String point = args[5];
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(ds).tablePrefix(prefix).build();
        IdempotencyFilter.Builder b = IdempotencyFilter.builder(store).lease(Duration.ofSeconds(60))
                .idempotencyListener(new IdempotencyListener() {
                    @Override
                    public void completed(IdempotencyCompletion completion, String method, String route, int status) {
                        // heard once the response is stored (and, when transactional, committed), before any byte is sent
                        haltAt("after-commit", point);
                    }
                });
        if (transactional) {
            b.transactional(RequestTransactions.jdbc(ds));
        }
        TestServer.Handler handler = (req, res) -> {
            String key = req.getHeader(IdempotencyFilter.KEY_HEADER);
            haltAt("before-effect", point);
            String sql = "INSERT INTO " + prefix + "effects (idem_key) VALUES (?)";
            try {
                if (transactional) {
                    effect(IdempotencyFilter.transactionConnection(req), sql, key);
                } else {
                    try (Connection c = ds.getConnection()) {
                        effect(c, sql, key);
                    }
                }
            } catch (SQLException e) {
                throw new ServletException("effect failed", e);
            }
            haltAt("after-effect", point);
            res.setStatus(201);
            res.setContentType("text/plain");
            res.getOutputStream().write(body(key).getBytes(StandardCharsets.UTF_8));
        };
        Filter midResponse = new HalfThenHalt("mid-response".equals(point));
        TestServer server = TestServer.start(handler, midResponse, b.build());
        System.out.println("PORT " + server.uri("/").getPort());
        System.out.flush();
        Thread.currentThread().join();
    }

    /** The response body: some tens of kilobytes, so that half of it is more than a network packet. */
    static String body(String key) {
        return ("done " + key + "\n").repeat(1000);
    }

    private static void effect(Connection c, String sql, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, key);
            ps.executeUpdate();
        }
    }

    static void haltAt(String here, String point) {
        if (here.equals(point)) {
            System.out.println("HALT " + here.toUpperCase(Locale.ROOT));
            System.out.flush();
            Runtime.getRuntime().halt(137);
        }
    }

    /** Outside the idempotency filter: when armed, sends half of the first body write, flushes it, and halts. */
    private static final class HalfThenHalt implements Filter {
        private final boolean armed;

        HalfThenHalt(boolean armed) {
            this.armed = armed;
        }

        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            if (!armed) {
                chain.doFilter(req, res);
                return;
            }
            HttpServletResponse response = (HttpServletResponse) res;
            chain.doFilter(req, new HttpServletResponseWrapper(response) {
                @Override
                public ServletOutputStream getOutputStream() throws IOException {
                    ServletOutputStream out = response.getOutputStream();
                    return new ServletOutputStream() {
                        @Override
                        public boolean isReady() {
                            return out.isReady();
                        }

                        @Override
                        public void setWriteListener(WriteListener listener) {
                            out.setWriteListener(listener);
                        }

                        @Override
                        public void write(int b) throws IOException {
                            write(new byte[] {(byte) b}, 0, 1);
                        }

                        @Override
                        public void write(byte[] b, int off, int len) throws IOException {
                            out.write(b, off, len / 2);
                            out.flush();
                            haltAt("mid-response", "mid-response");
                        }
                    };
                }
            });
        }
    }
}
