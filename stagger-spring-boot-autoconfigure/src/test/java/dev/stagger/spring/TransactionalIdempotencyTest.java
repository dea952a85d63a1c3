package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.jdbc.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configurers.AbstractHttpConfigurer;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code stagger.idempotency.transactional=true} on PostgreSQL: a controller whose
 * {@code @Transactional} service inserts with {@code JdbcTemplate} joins the filter's transaction,
 * so the insert and the stored response commit together, or roll back together.
 * {@link NonTransactionalIdempotencyTest} runs the same application without the property.
 */
@SpringBootTest(classes = TransactionalIdempotencyTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "server.address=127.0.0.1",
                "stagger.idempotency.enabled=true",
                "stagger.idempotency.paths=/orders/*",
                "stagger.idempotency.scope-header=X-Api-Key",
                "stagger.idempotency.transactional=true",
                "spring.autoconfigure.exclude=" + TestAutoConfigurations.JPA_AND_JOOQ
        })
class TransactionalIdempotencyTest {
    static final String SUFFIX = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    /** The application's table; its key is checked at commit, so a duplicate fails the commit, not the insert. */
    static final String ORDERS = "sit_orders_" + SUFFIX;
    static final String PREFIX = "sit_" + SUFFIX + "_";

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @LocalServerPort
    int port;
    @Autowired
    JdbcTemplate jdbc;

    @DynamicPropertySource
    static void tables(DynamicPropertyRegistry registry) throws SQLException {
        createOrders();
        registry.add("stagger.idempotency.table-prefix", () -> PREFIX);
    }

    static void createOrders() throws SQLException {
        try (Connection c = TestDatabases.postgres().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + ORDERS
                    + " (id VARCHAR(64), CONSTRAINT " + ORDERS + "_pk PRIMARY KEY (id) DEFERRABLE INITIALLY DEFERRED)");
        }
    }

    @AfterAll
    static void drop() throws SQLException {
        try (Connection c = TestDatabases.postgres().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + ORDERS);
            s.execute("DROP TABLE IF EXISTS " + PREFIX + "idempotency");
            s.execute("DROP TABLE IF EXISTS " + PREFIX + "schema_version");
        }
    }

    HttpResponse<String> post(String outcome, String key, String order) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/" + outcome))
                .header("X-Api-Key", "client-a").header("Idempotency-Key", key).header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString(order)).build(), HttpResponse.BodyHandlers.ofString());
    }

    long orders(String order) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM " + ORDERS + " WHERE id = ?", Long.class, order);
    }

    long records() {
        return jdbc.queryForObject("SELECT COUNT(*) FROM " + PREFIX + "idempotency", Long.class);
    }

    @Test
    void theInsertAndTheStoredResponseCommitTogether() throws Exception {
        String order = UUID.randomUUID().toString();
        String key = UUID.randomUUID().toString();
        long before = records();

        HttpResponse<String> first = post("placed", key, order);
        HttpResponse<String> repeat = post("placed", key, order);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).isEqualTo("placed " + order);
        assertThat(repeat.statusCode()).isEqualTo(201);
        assertThat(repeat.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(orders(order)).isEqualTo(1);
        assertThat(records()).isEqualTo(before + 1);
    }

    @Test
    void aServerErrorRollsTheInsertBackWithTheRecord() throws Exception {
        String order = UUID.randomUUID().toString();
        long before = records();

        assertThat(post("server-error", UUID.randomUUID().toString(), order).statusCode()).isEqualTo(500);

        assertThat(orders(order)).isZero();
        assertThat(records()).as("the key was released").isEqualTo(before);
    }

    @Test
    void anExceptionRollsTheInsertBackWithTheRecord() throws Exception {
        String order = UUID.randomUUID().toString();
        long before = records();

        assertThat(post("exception", UUID.randomUUID().toString(), order).statusCode()).isEqualTo(500);

        assertThat(orders(order)).isZero();
        assertThat(records()).isEqualTo(before);
    }

    @Test
    void aCommitThatFailsSendsNoSuccessAndKeepsNeitherTheInsertNorTheRecord() throws Exception {
        String order = UUID.randomUUID().toString();
        String key = UUID.randomUUID().toString();
        long before = records();

        HttpResponse<String> response = post("placed-twice", key, order);

        assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
        assertThat(response.body()).doesNotContain("placed");
        assertThat(orders(order)).isZero();
        assertThat(records()).as("the key was released").isEqualTo(before);
        HttpResponse<String> retry = post("placed-twice", key, order);
        assertThat(retry.statusCode()).as("the retry runs again").isEqualTo(503);
    }

    @Test
    void aLeaseTakenOverMeanwhileRollsTheInsertBackAndAnswers409() throws Exception {
        String order = UUID.randomUUID().toString();

        HttpResponse<String> response = post("taken-over", UUID.randomUUID().toString(), order);

        assertThat(response.statusCode()).isEqualTo(409);
        assertThat(orders(order)).isZero();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Orders.class, OrdersController.class})
    static class App {
        @Bean
        DataSource dataSource() {
            return TestDatabases.postgres();
        }

        @Bean
        SecurityFilterChain api(HttpSecurity http) throws Exception {
            return http.csrf(AbstractHttpConfigurer::disable)
                    .authorizeHttpRequests(requests -> requests.anyRequest().permitAll()).build();
        }
    }

    /** The application's own transactional code: joins the transaction it finds. */
    static class Orders {
        private final JdbcTemplate jdbc;

        Orders(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @Transactional
        public void place(String order) {
            jdbc.update("INSERT INTO " + ORDERS + " (id) VALUES (?)", order);
        }
    }

    @RestController
    static class OrdersController {
        private final Orders orders;

        OrdersController(Orders orders) {
            this.orders = orders;
        }

        @PostMapping("/orders/{outcome}")
        ResponseEntity<String> place(@PathVariable("outcome") String outcome, @RequestBody String order)
                throws SQLException {
            orders.place(order);
            switch (outcome) {
                case "server-error":
                    return ResponseEntity.status(500).body("failed after the insert");
                case "exception":
                    throw new IllegalStateException("failed after the insert");
                case "placed-twice":
                    orders.place(order); // the deferred key fails at commit
                    break;
                case "taken-over":
                    // what a takeover after the lease ran out does to the record, from another connection
                    try (Connection c = TestDatabases.postgres().getConnection(); Statement s = c.createStatement()) {
                        s.executeUpdate("UPDATE " + PREFIX + "idempotency SET lease_token = 'someone-else'"
                                + " WHERE state = 'IN_FLIGHT'");
                    }
                    break;
                default:
                    break;
            }
            return ResponseEntity.status(201).body("placed " + order);
        }
    }
}
