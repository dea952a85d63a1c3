package dev.stagger.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.support.Http;
import dev.stagger.idempotency.support.PostgresTables;
import dev.stagger.testsupport.jdbc.TestDataSource;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Kills the serving JVM ({@link CrashingServer}, Jetty on loopback, the store and the handler's
 * effect on one PostgreSQL) at each point of a keyed request, then retries the request with the
 * same key on a fresh server, as a client would: on a transactional route the effect happens
 * exactly once whatever the point. The same harness shows the plain (non-transactional) filter
 * running the effect twice when killed after it.
 *
 * <p>The killed server's lease would run out after a minute; the test moves it into the past in
 * the table instead of waiting (what the passing of the lease does to the row), and the retry
 * then takes the key over.
 */
@Timeout(240)
class CrashAtEveryPointTest {
    private final String prefix = PostgresTables.uniquePrefix();
    private final List<Process> processes = new ArrayList<>();
    private TestDataSource ds;

    @BeforeEach
    void setUp() throws Exception {
        ds = TestDatabases.postgres();
        JdbcIdempotencyStore.builder(ds).tablePrefix(prefix).build().close();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + prefix + "effects (idem_key VARCHAR(64) NOT NULL)");
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (Process p : processes) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (ds != null) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + prefix + "effects");
            }
            PostgresTables.drop(ds, prefix);
        }
    }

    @ParameterizedTest(name = "killed {0}")
    @ValueSource(strings = {"before-effect", "after-effect", "after-commit", "mid-response"})
    void aTransactionalRouteKilledAtAnyPointRunsTheEffectExactlyOnceOverTheRetry(String point) throws Exception {
        String key = "order-" + UUID.randomUUID();
        killedAt("transactional", point, key);

        HttpResponse<byte[]> retry = retryOnAFreshServer("transactional", key);

        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(new String(retry.body(), StandardCharsets.UTF_8).equals(CrashingServer.body(key)))
                .as("the retry's body is the order's whole answer").isTrue();
        boolean committedBeforeTheKill = point.equals("after-commit") || point.equals("mid-response");
        // killed before the commit: the effect rolled back and the retry ran it; after: the retry is the replay
        assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER))
                .isEqualTo(committedBeforeTheKill ? java.util.Optional.of("true") : java.util.Optional.empty());
        assertThat(effects(key)).as("effects of %s killed %s", key, point).isEqualTo(1);
    }

    /** The defect transactional routes fix: without a transaction the effect outlives the unstored response. */
    @Test
    void aPlainRouteKilledAfterTheEffectRunsItTwiceOverTheRetry() throws Exception {
        String key = "order-" + UUID.randomUUID();
        killedAt("plain", "after-effect", key);

        HttpResponse<byte[]> retry = retryOnAFreshServer("plain", key);

        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
        assertThat(effects(key)).isEqualTo(2);
    }

    /** Sends the request to a server that halts at {@code point}; the client sees the connection die. */
    private void killedAt(String mode, String point, String key) throws Exception {
        Server doomed = start(mode, point);
        assertThatThrownBy(() -> Http.send(Http.post(doomed.uri, key, "alice", "{\"item\":\"book\"}")))
                .isInstanceOf(IOException.class);
        assertThat(doomed.process.waitFor(30, TimeUnit.SECONDS)).as("server halted").isTrue();
        assertThat(doomed.process.exitValue()).isEqualTo(137);
        assertThat(doomed.haltedAt()).isEqualTo("HALT " + point.toUpperCase(java.util.Locale.ROOT));
    }

    private HttpResponse<byte[]> retryOnAFreshServer(String mode, String key) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            // the dead server's lease passes (an hour into the past), as it would a minute after the kill
            s.executeUpdate("UPDATE " + prefix + "idempotency SET lease_until = lease_until - 3600000"
                    + " WHERE state = 'IN_FLIGHT'");
        }
        Server fresh = start(mode, "none");
        return Http.send(Http.post(fresh.uri, key, "alice", "{\"item\":\"book\"}"));
    }

    private long effects(String key) throws Exception {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + prefix + "effects WHERE idem_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private Server start(String mode, String point) throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), CrashingServer.class.getName(), ds.url(), pgUser(),
                pgPassword(), prefix, mode, point).redirectErrorStream(true).start();
        processes.add(p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null && !line.startsWith("PORT ")) {
            // skip what the JVM prints before the server is up
        }
        assertThat(line).as("server (%s, %s) started", mode, point).startsWith("PORT ");
        return new Server(p, out, URI.create("http://127.0.0.1:" + line.substring(5).trim() + "/orders"));
    }

    private static String pgUser() {
        String v = System.getenv("STAGGER_PG_USER");
        return v == null || v.isBlank() ? "postgres" : v;
    }

    private static String pgPassword() {
        String v = System.getenv("STAGGER_PG_PASSWORD");
        return v == null ? "" : v;
    }

    private record Server(Process process, BufferedReader out, URI uri) {
        /** The last thing the server printed before it died: {@code HALT <POINT>}. */
        String haltedAt() throws IOException {
            String last = null;
            String line;
            while ((line = out.readLine()) != null) {
                last = line;
            }
            return last;
        }
    }
}
