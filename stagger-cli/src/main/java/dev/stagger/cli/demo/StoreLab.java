package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.Fallback;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.UserFacingException;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.StaleResponseCache;
import dev.stagger.http.StatusTable;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jobs.Deferrable;
import dev.stagger.jobs.Deferred;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.QueueFallback;
import dev.stagger.jobs.WorkerPool;
import dev.stagger.observability.RetryMetrics;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Panel 6: what users see while a downstream is down. A small store behind one circuit breaker:
 * its prices are answered stale from the HTTP client's stale-if-error cache (with their age), an
 * order placed while it is down is queued as a durable job and placed once it is back, and the
 * account page, which must never be shown stale, answers a message saying when to try again.
 */
final class StoreLab implements AutoCloseable {
    static final String QUEUE = "orders";
    static final String TYPE = "place-order";

    private final AtomicBoolean down = new AtomicBoolean();
    private final AtomicInteger orderNumbers = new AtomicInteger();
    private final AtomicInteger placed = new AtomicInteger();
    private final HttpClient http;
    private volatile URI store = URI.create("http://127.0.0.1:0/store/");
    private final CircuitBreaker breaker;
    private final RetryingHttpClient prices;
    private final Retry orderRetry;
    private final Retry account;
    private final QueueFallback orders;
    private final JobQueue jobs;
    private final WorkerPool workers;

    StoreLab(Path dataDir, HttpClient http, RetryMetrics metrics) {
        this.http = http;
        this.breaker = CircuitBreaker.builder("store").consecutiveFailures(2).openDuration(Duration.ofSeconds(3))
                .halfOpenPermits(1).failurePredicate(StatusTable.defaults().failures()).build();
        metrics.bind(breaker);
        RetryPolicy quick = RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofMillis(50))).build();
        this.prices = RetryingHttpClient.builder(http).service("store").policy(quick).circuitBreaker(breaker)
                .listener(metrics.listener("store"))
                .fallback(StaleResponseCache.builder().maxEntries(100).userMessage("Prices are unavailable right now.")
                        .build()).build();
        Retry base = Retry.of("store", quick).withCircuitBreaker(breaker).withListener(metrics.listener("store"));
        this.orderRetry = base;
        this.account = base.withFallback(Fallback.message("Your account is unavailable right now."));
        this.jobs = JobQueue.builder(SqliteDataSource.file(dataDir.resolve("orders.db"))).build();
        this.orders = QueueFallback.builder(jobs, QUEUE, TYPE).build();
        // the deferred order runs again and again with backoff until the store is back (a short demo
        // stand-in for RetryPolicy.background(), which starts at 1 s and grows to a minute)
        this.workers = WorkerPool.builder(jobs, QUEUE).pollInterval(Duration.ofMillis(200))
                .handler(TYPE, job -> placeOrder(job.payloadText()), RetryPolicy.builder().maxAttempts(40)
                        .backoff(Backoff.exponential(Duration.ofMillis(250)).maxDelay(Duration.ofSeconds(1))).build())
                .build().start();
    }

    /** Where the store answers, once the server has its port. */
    void connect(URI store) {
        this.store = store;
    }

    /** The store itself: {@code /store/prices}, {@code /store/orders}, {@code /store/account}; 503 while down. */
    HttpServlet servlet() {
        return new HttpServlet() {
            private static final long serialVersionUID = 1L;

            @Override
            protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                resp.setContentType("application/json");
                if (down.get()) {
                    resp.setStatus(503);
                    resp.getWriter().write("{\"error\":\"store down\"}");
                    return;
                }
                String path = req.getPathInfo() == null ? "" : req.getPathInfo();
                switch (path) {
                    case "/prices" -> {
                        resp.setHeader("Cache-Control", "max-age=0, stale-if-error=600");
                        resp.getWriter().write("{\"ACME\":41.50,\"GLOBEX\":17.25,\"INITECH\":8.10}");
                    }
                    case "/orders" -> resp.getWriter().write("{\"receipt\":\"R-" + placed.incrementAndGet() + "\"}");
                    case "/account" -> {
                        resp.setHeader("Cache-Control", "no-store");
                        resp.getWriter().write("{\"name\":\"Ada\",\"balance\":120.00}");
                    }
                    default -> resp.setStatus(404);
                }
            }
        };
    }

    record Store(boolean down, String breaker, int placed) {
    }

    Store setDown(JsonNode r) {
        down.set(Json.boolField(r, "down", true));
        return state();
    }

    private Store state() {
        return new Store(down.get(), breaker.state().name(), placed.get());
    }

    /**
     * Prices as the page shows them: fresh, or stale with their age and why; {@code message}
     * when there is nothing to show.
     */
    record Prices(@Nullable String prices, boolean stale, @Nullable Long ageSeconds, @Nullable String reason,
                  @Nullable String message, String breaker) {
    }

    Prices prices(JsonNode r) throws Exception {
        try {
            HttpResponse<String> response = prices.send(HttpRequest.newBuilder(store.resolve("prices"))
                    .timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                return new Prices(null, false, null, null, "Prices are unavailable right now.", breaker.state().name());
            }
            boolean stale = StaleResponseCache.isStale(response);
            return new Prices(response.body(), stale,
                    StaleResponseCache.age(response).map(Duration::getSeconds).orElse(null),
                    response.headers().firstValue(StaleResponseCache.STALE_HEADER).orElse(null), null,
                    breaker.state().name());
        } catch (UserFacingException unavailable) {
            return new Prices(null, false, null, null, unavailable.userMessage() + tryAgain(unavailable),
                    breaker.state().name());
        }
    }

    /** An order as the page shows it: placed with a receipt, or queued as a job. */
    record Order(String order, boolean deferred, @Nullable Long jobId, @Nullable String receipt, String message) {
    }

    Order order(JsonNode r) throws Exception {
        String order = "order-" + orderNumbers.incrementAndGet();
        Deferrable<String> answer = orders.call(orderRetry, order, order, () -> placeOrder(order));
        if (answer.isDeferred()) {
            Deferred d = answer.deferred().orElseThrow();
            return new Order(order, true, d.jobId(), null,
                    "The store is busy: your order is queued and will be placed as soon as it is back.");
        }
        return new Order(order, false, null, answer.value(), "Order placed.");
    }

    /** The account, or the user-facing message with when to try again. */
    record Account(@Nullable String account, @Nullable String message, @Nullable Long retryInMs) {
    }

    Account account(JsonNode r) throws Exception {
        try {
            return new Account(account.call(() -> get("account")), null, null);
        } catch (UserFacingException unavailable) {
            return new Account(null, unavailable.userMessage() + tryAgain(unavailable),
                    unavailable.retryIn().map(Duration::toMillis).orElse(null));
        }
    }

    private static String tryAgain(UserFacingException unavailable) {
        Long retryIn = unavailable.retryIn().map(Duration::toMillis).orElse(null);
        return retryIn == null ? " Please try again later."
                : " Please try again in " + Math.max(1, (retryIn + 999) / 1000) + " s.";
    }

    record QueuedOrder(long jobId, String order, String state, int attempt) {
    }

    record Orders(Store store, List<QueuedOrder> orders) {
    }

    Orders list(JsonNode r) {
        List<QueuedOrder> rows = new ArrayList<>();
        List<Job> all = new ArrayList<>();
        for (JobState s : JobState.values()) {
            all.addAll(jobs.admin().list(s, QUEUE, 20));
        }
        all.sort(Comparator.comparingLong(Job::id).reversed());
        for (Job j : all.subList(0, Math.min(20, all.size()))) {
            rows.add(new QueuedOrder(j.id(), j.payloadText(), j.state().name(), j.attempt()));
        }
        return new Orders(state(), rows);
    }

    private String placeOrder(String order) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(store.resolve("orders"))
                .timeout(Duration.ofSeconds(2)).POST(HttpRequest.BodyPublishers.ofString(order)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("store answered " + response.statusCode());
        }
        return response.body();
    }

    private String get(String path) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(store.resolve(path))
                .timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("store answered " + response.statusCode());
        }
        return response.body();
    }

    @Override
    public void close() {
        workers.close();
    }
}
