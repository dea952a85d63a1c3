package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.SQLException;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The control for {@link TransactionalIdempotencyTest}: the same application without
 * {@code stagger.idempotency.transactional}, where the service's insert commits on its own and
 * outlives the 500 whose key the filter released (a retry would insert again).
 */
@SpringBootTest(classes = TransactionalIdempotencyTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "server.address=127.0.0.1",
                "stagger.idempotency.enabled=true",
                "stagger.idempotency.paths=/orders/*",
                "stagger.idempotency.scope-header=X-Api-Key",
                "spring.autoconfigure.exclude=" + TestAutoConfigurations.JPA_AND_JOOQ
        })
class NonTransactionalIdempotencyTest {
    @LocalServerPort
    int port;
    @Autowired
    JdbcTemplate jdbc;

    @DynamicPropertySource
    static void tables(DynamicPropertyRegistry registry) throws SQLException {
        TransactionalIdempotencyTest.createOrders();
        registry.add("stagger.idempotency.table-prefix", () -> TransactionalIdempotencyTest.PREFIX);
    }

    @AfterAll
    static void drop() throws SQLException {
        TransactionalIdempotencyTest.drop();
    }

    @Test
    void withoutThePropertyTheInsertOutlivesTheReleasedServerError() throws Exception {
        String order = UUID.randomUUID().toString();
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/server-error"))
                        .header("X-Api-Key", "client-a").header("Idempotency-Key", UUID.randomUUID().toString())
                        .POST(HttpRequest.BodyPublishers.ofString(order)).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(500);
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + TransactionalIdempotencyTest.ORDERS + " WHERE id = ?",
                Long.class, order)).isEqualTo(1);
    }
}
