package dev.stagger.example;

import dev.stagger.jobs.EnqueueOptions;
import dev.stagger.jobs.JobContext;
import dev.stagger.jobs.JobQueue;
import dev.stagger.spring.StaggerHttp;
import dev.stagger.spring.StaggerJobHandler;
import dev.stagger.spring.StaggerRetry;
import java.sql.Connection;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/** The shop's endpoints: {@code GET /quotes/{sku}}, {@code POST /orders}. */
@RestController
public class Shop {
    private static final Logger log = LoggerFactory.getLogger(Shop.class);

    private final StaggerHttp http;
    private final Environment environment;
    private final JdbcTemplate jdbc;
    private final JobQueue jobs;
    private final AtomicLong receipts = new AtomicLong();
    private volatile RestClient pricing;

    public Shop(StaggerHttp http, Environment environment, JdbcTemplate jdbc, JobQueue jobs) {
        this.http = http;
        this.environment = environment;
        this.jdbc = jdbc;
        this.jobs = jobs;
    }

    /** The pricing client: Stagger's interceptor added last, so it sees each attempt. */
    private RestClient pricing() {
        RestClient client = pricing;
        if (client == null) {
            String port = environment.getProperty("local.server.port", environment.getProperty("server.port", "8080"));
            client = RestClient.builder().baseUrl("http://127.0.0.1:" + port)
                    .requestInterceptor(http.interceptor("pricing")).build();
            pricing = client;
        }
        return client;
    }

    /** A quote: one call to the flaky pricing service, retried after its 503 as its Retry-After says. */
    @GetMapping("/quotes/{sku}")
    public Map<String, Object> quote(@PathVariable String sku) {
        String price = pricing().get().uri("/pricing/{sku}", sku).retrieve().body(String.class);
        return Map.of("sku", sku, "price", Integer.parseInt(price));
    }

    /** An order: stored in a transaction that is retried as a whole, and a receipt job in the same database. */
    public record OrderRequest(String sku, int quantity) {
    }

    @PostMapping("/orders")
    @ResponseStatus(HttpStatus.CREATED)
    @StaggerRetry("orders")      // outside @Transactional: each attempt is a transaction of its own
    @Transactional
    public Map<String, Object> order(@RequestBody OrderRequest request) {
        String id = UUID.randomUUID().toString();
        jdbc.update("INSERT INTO shop_orders (id, sku, quantity) VALUES (?, ?, ?)", id, request.sku(), request.quantity());
        // the job is stored on the transaction's connection: it commits with the order, or not at all
        Connection connection = DataSourceUtils.getConnection(jdbc.getDataSource());
        try {
            jobs.enqueue(connection, "mail", "receipt", id, EnqueueOptions.defaults().key("receipt-" + id));
        } finally {
            DataSourceUtils.releaseConnection(connection, jdbc.getDataSource());
        }
        return Map.of("id", id, "sku", request.sku(), "quantity", request.quantity());
    }

    /** Receipts are sent by a job: retried with backoff if this throws, at least once. */
    @StaggerJobHandler(queue = "mail", type = "receipt")
    public void sendReceipt(JobContext job) {
        receipts.incrementAndGet();
        log.info("receipt sent for order {}", job.payloadText());
    }

    /** How many receipts went out since startup. */
    @GetMapping("/receipts")
    public Map<String, Object> receipts() {
        return Map.of("sent", receipts.get());
    }
}
