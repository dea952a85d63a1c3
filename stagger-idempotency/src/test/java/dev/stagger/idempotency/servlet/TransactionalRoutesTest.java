package dev.stagger.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.idempotency.IdempotencyCompletion;
import dev.stagger.idempotency.IdempotencyListener;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.support.Http;
import dev.stagger.idempotency.support.PostgresTables;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testsupport.jdbc.TestDatabases;
import jakarta.servlet.ServletException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What a transactional route does with each kind of response, on PostgreSQL, in one JVM. */
@Timeout(60)
class TransactionalRoutesTest {
    private final String prefix = PostgresTables.uniquePrefix();
    private final List<IdempotencyCompletion> completions = new CopyOnWriteArrayList<>();
    private DataSource ds;
    private JdbcIdempotencyStore store;
    private TestServer server;

    @BeforeEach
    void setUp() throws Exception {
        ds = TestDatabases.postgres();
        store = JdbcIdempotencyStore.builder(ds).tablePrefix(prefix).build();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + prefix + "effects (idem_key VARCHAR(64) NOT NULL)");
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        if (server != null) {
            server.close();
        }
        if (ds != null) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + prefix + "effects");
            }
            PostgresTables.drop(ds, prefix);
        }
    }

    private URI serve(RequestTransactions transactions, TestServer.Handler handler) throws Exception {
        IdempotencyFilter filter = IdempotencyFilter.builder(store).transactional(transactions)
                .idempotencyListener(new IdempotencyListener() {
                    @Override
                    public void completed(IdempotencyCompletion completion, String method, String route, int status) {
                        completions.add(completion);
                    }
                }).build();
        server = TestServer.start(handler, filter);
        return server.uri("/orders");
    }

    /** Inserts the effect through the request's transaction, then answers {@code status}. */
    private TestServer.Handler effectThenAnswer(int status) {
        return (req, res) -> {
            insertEffect(IdempotencyFilter.transactionConnection(req), req.getHeader(IdempotencyFilter.KEY_HEADER));
            res.setStatus(status);
            res.getOutputStream().write(("status " + status).getBytes(StandardCharsets.UTF_8));
        };
    }

    private void insertEffect(Connection c, String key) throws ServletException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + prefix + "effects (idem_key) VALUES (?)")) {
            ps.setString(1, key);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new ServletException("effect failed", e);
        }
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

    private static HttpResponse<byte[]> post(URI uri, String key) throws Exception {
        return Http.send(Http.post(uri, key, "alice", "{\"item\":\"book\"}"));
    }

    @Test
    void aStoredResponseCommitsWithTheEffectAndIsReplayed() throws Exception {
        URI uri = serve(RequestTransactions.jdbc(ds), effectThenAnswer(201));
        String key = UUID.randomUUID().toString();

        HttpResponse<byte[]> first = post(uri, key);
        HttpResponse<byte[]> repeat = post(uri, key);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(repeat.statusCode()).isEqualTo(201);
        assertThat(repeat.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
        assertThat(new String(repeat.body(), StandardCharsets.UTF_8)).isEqualTo("status 201");
        assertThat(effects(key)).isEqualTo(1);
        assertThat(completions).containsExactly(IdempotencyCompletion.STORED);
    }

    @Test
    void aServerErrorRollsTheEffectBackAndReleasesTheKey() throws Exception {
        URI uri = serve(RequestTransactions.jdbc(ds), effectThenAnswer(500));
        String key = UUID.randomUUID().toString();

        assertThat(post(uri, key).statusCode()).isEqualTo(500);
        assertThat(effects(key)).isZero();
        assertThat(store.count()).isZero();
        assertThat(post(uri, key).statusCode()).as("the retry runs again").isEqualTo(500);
        assertThat(completions).containsExactly(IdempotencyCompletion.RELEASED, IdempotencyCompletion.RELEASED);
    }

    @Test
    void aHandlerExceptionRollsTheEffectBack() throws Exception {
        URI uri = serve(RequestTransactions.jdbc(ds), (req, res) -> {
            insertEffect(IdempotencyFilter.transactionConnection(req), req.getHeader(IdempotencyFilter.KEY_HEADER));
            throw new ServletException("handler failed after its write");
        });
        String key = UUID.randomUUID().toString();

        assertThat(post(uri, key).statusCode()).isEqualTo(500);
        assertThat(effects(key)).isZero();
        assertThat(store.count()).isZero();
        assertThat(completions).containsExactly(IdempotencyCompletion.FAILED);
    }

    @Test
    void aRepeatWhileTheTransactionRunsSeesTheClaimAndGets409() throws Exception {
        CountDownLatch inHandler = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        URI uri = serve(RequestTransactions.jdbc(ds), (req, res) -> {
            insertEffect(IdempotencyFilter.transactionConnection(req), req.getHeader(IdempotencyFilter.KEY_HEADER));
            inHandler.countDown();
            try {
                finish.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            res.setStatus(201);
        });
        String key = UUID.randomUUID().toString();
        CompletableFuture<HttpResponse<byte[]>> first = Http.CLIENT.sendAsync(
                Http.post(uri, key, "alice", "{\"item\":\"book\"}"), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(inHandler.await(20, TimeUnit.SECONDS)).isTrue();

        HttpResponse<byte[]> repeat = post(uri, key);
        assertThat(effects(key)).as("the first's write is not visible before its commit").isZero();
        finish.countDown();

        assertThat(repeat.statusCode()).isEqualTo(409);
        assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(effects(key)).isEqualTo(1);
        assertThat(post(uri, key).headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
    }

    @Test
    void aLeaseTakenOverMeanwhileRollsThisExecutionBackAndAnswers409() throws Exception {
        URI uri = serve(RequestTransactions.jdbc(ds), (req, res) -> {
            insertEffect(IdempotencyFilter.transactionConnection(req), req.getHeader(IdempotencyFilter.KEY_HEADER));
            // what a takeover does to the row once the lease has passed: another lease token
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE " + prefix + "idempotency SET lease_token = 'someone-else'");
            } catch (SQLException e) {
                throw new ServletException(e);
            }
            res.setStatus(201);
        });
        String key = UUID.randomUUID().toString();

        HttpResponse<byte[]> response = post(uri, key);

        assertThat(response.statusCode()).isEqualTo(409);
        assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(effects(key)).isZero();
        assertThat(completions).containsExactly(IdempotencyCompletion.LEASE_LOST);
    }

    @Test
    void aFailedCommitAnswers503InsteadOfTheResponseAndReleasesTheKey() throws Exception {
        RequestTransactions jdbc = RequestTransactions.jdbc(ds);
        RequestTransactions failingCommit = () -> {
            RequestTransactions.Transaction tx = jdbc.begin();
            return new RequestTransactions.Transaction() {
                @Override
                public Connection connection() {
                    return tx.connection();
                }

                @Override
                public void commit() throws SQLException {
                    tx.rollback();
                    throw new SQLException("connection lost at commit");
                }

                @Override
                public void rollback() throws SQLException {
                    tx.rollback();
                }
            };
        };
        URI uri = serve(failingCommit, effectThenAnswer(201));
        String key = UUID.randomUUID().toString();

        HttpResponse<byte[]> response = post(uri, key);

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(new String(response.body(), StandardCharsets.UTF_8)).doesNotContain("status 201")
                .contains("store-unavailable");
        assertThat(effects(key)).isZero();
        assertThat(store.count()).as("released: the retry runs again").isZero();
        assertThat(completions).containsExactly(IdempotencyCompletion.STORE_FAILED);
    }

    @Test
    void aHandlerThatSwallowsAnSqlErrorLeavesATransactionThatCannotBeStoredAndGets503() throws Exception {
        URI uri = serve(RequestTransactions.jdbc(ds), (req, res) -> {
            Connection c = IdempotencyFilter.transactionConnection(req);
            insertEffect(c, req.getHeader(IdempotencyFilter.KEY_HEADER));
            try (Statement s = c.createStatement()) {
                s.execute("SELECT * FROM no_such_table_" + prefix);
            } catch (SQLException e) {
                // swallowed: PostgreSQL has aborted the transaction all the same
            }
            res.setStatus(201);
            res.getOutputStream().write("placed".getBytes(StandardCharsets.UTF_8));
        });
        String key = UUID.randomUUID().toString();

        HttpResponse<byte[]> response = post(uri, key);

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(new String(response.body(), StandardCharsets.UTF_8)).doesNotContain("placed");
        assertThat(effects(key)).isZero();
        assertThat(store.count()).isZero();
        assertThat(completions).containsExactly(IdempotencyCompletion.STORE_FAILED);
    }

    @Test
    void theHandlersConnectionCannotEndTheTransactionAndClosingItIsHarmless() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        URI uri = serve(RequestTransactions.jdbc(ds), (req, res) -> {
            try (Connection c = IdempotencyFilter.transactionConnection(req)) {
                insertEffect(c, req.getHeader(IdempotencyFilter.KEY_HEADER));
                for (String call : List.of("commit", "rollback", "setAutoCommit")) {
                    try {
                        switch (call) {
                            case "commit" -> c.commit();
                            case "rollback" -> c.rollback();
                            default -> c.setAutoCommit(true);
                        }
                        seen.add(call + " allowed");
                    } catch (IllegalStateException e) {
                        seen.add(call + " refused");
                    }
                }
            } catch (SQLException e) {
                throw new ServletException(e);
            }
            res.setStatus(201);
        });
        String key = UUID.randomUUID().toString();

        assertThat(post(uri, key).statusCode()).isEqualTo(201);
        assertThat(seen).containsExactly("commit refused", "rollback refused", "setAutoCommit refused");
        assertThat(effects(key)).isEqualTo(1);
        assertThat(completions).containsExactly(IdempotencyCompletion.STORED);
    }

    @Test
    void requestsOutsideATransactionalRouteHaveNoConnection() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        IdempotencyFilter filter = IdempotencyFilter.builder(store)
                .transactional(RequestTransactions.jdbc(ds), (method, route) -> route.startsWith("/tx/")).build();
        server = TestServer.start((req, res) -> {
            try {
                IdempotencyFilter.transactionConnection(req);
                seen.add("connection");
            } catch (IllegalStateException e) {
                seen.add(e.getMessage());
            }
            res.setStatus(200);
        }, filter);

        post(server.uri("/plain/orders"), UUID.randomUUID().toString());
        post(server.uri("/tx/orders"), UUID.randomUUID().toString());
        Http.send(Http.post(server.uri("/tx/orders"), null, "alice", "{}")); // PUT-less POST without a key: 400

        assertThat(seen).containsExactly("this request runs in no idempotency transaction: only keyed requests on"
                + " routes set with IdempotencyFilter.Builder.transactional(..) do", "connection");
    }

    @Test
    void transactionalRoutesNeedAStoreOnPostgres(@TempDir Path dir) {
        try (JdbcIdempotencyStore sqlite = JdbcIdempotencyStore.sqlite(dir.resolve("keys.db"))) {
            IdempotencyFilter.Builder b = IdempotencyFilter.builder(sqlite)
                    .transactional(RequestTransactions.jdbc(SqliteDataSource.file(dir.resolve("keys.db"))));
            assertThatThrownBy(b::build).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("transactional needs a JdbcIdempotencyStore on PostgreSQL, got");
        }
    }
}
