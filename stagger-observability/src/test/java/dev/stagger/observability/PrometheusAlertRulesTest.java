package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.stagger.AdaptiveThrottle;
import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.WorkerPool;
import dev.stagger.rabbitmq.MessageEvent;
import dev.stagger.rabbitmq.MessageOutcome;
import dev.stagger.shedding.LoadSheddingFilter;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.Services;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped alert rules ({@code stagger-alerts.yml}) against a real Prometheus (Debian's
 * {@code prometheus} package; skipped with a message where it is absent, failing under
 * {@code CI=true}): promtool accepts them, every series they read is one Stagger exports, and a
 * retry storm makes {@code StaggerRetryStorm} fire in a Prometheus scraping a running registry.
 */
class PrometheusAlertRulesTest {
    static final String RULES = "/dev/stagger/observability/alerting/stagger-alerts.yml";
    static final String DASHBOARD = "/dev/stagger/observability/alerting/stagger-dashboard.json";

    @TempDir
    Path dir;

    private static Path binary(String name) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            Path p = Path.of(d, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        throw Services.unavailable("prometheus", name + " is not installed (Debian package prometheus; .ci/run installs it)");
    }

    private Path rules() throws IOException {
        return shipped(RULES);
    }

    private Path shipped(String resource) throws IOException {
        Path file = dir.resolve(resource.substring(resource.lastIndexOf('/') + 1));
        try (InputStream in = PrometheusAlertRulesTest.class.getResourceAsStream(resource)) {
            assertThat(in).as("shipped in the jar at " + resource).isNotNull();
            Files.copy(in, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        return file;
    }

    private static String run(Path workDir, String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("%s ended", command[0]).isTrue();
        assertThat(p.exitValue()).as("%s exit code; output:%n%s", command[0], out).isZero();
        return out;
    }

    /**
     * A registry holding every meter the rules and the dashboard read: a retry with a breaker, a
     * budget and a throttle, one that deferred to it, a load-shedding filter, a dead letter, and a
     * job queue with a dead job and a measurement.
     */
    private PrometheusMeterRegistry everyStaggerMeter() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        VirtualClock clock = new VirtualClock();
        RetryMetrics metrics = RetryMetrics.of(registry);
        CircuitBreaker breaker = CircuitBreaker.builder("bank").consecutiveFailures(3).clock(clock).build();
        RetryBudget budget = RetryBudget.builder("bank").clock(clock).build();
        AdaptiveThrottle throttle = AdaptiveThrottle.of("bank");
        metrics.bind(breaker);
        metrics.bind(budget);
        metrics.bind(throttle);
        Retry bank = metrics.instrument(Retry.of("bank", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).build())
                .withCircuitBreaker(breaker).withBudget(budget).withClock(clock));
        Retry service = metrics.instrument(Retry.of("service", RetryPolicy.builder().maxAttempts(3).build())
                .withClock(clock).withoutBudget());
        try {
            service.call(() -> bank.call(() -> {
                throw new IOException("down");
            }));
        } catch (IOException expected) {
            // the counters, not the failure, are under test; the service retry defers to the bank's
        }
        SheddingMetrics.of(registry).bind(LoadSheddingFilter.builder("api").build());
        MessageTelemetry.of(registry).onMessage(new MessageEvent("billing", "orders", "m-1", 3, 3,
                MessageOutcome.DEAD_LETTERED, Duration.ofMillis(4), Duration.ofSeconds(2), Duration.ZERO,
                EndReason.EXHAUSTED, new IOException("down")));
        JobQueue jobs = JobQueue.builder(SqliteDataSource.file(dir.resolve("jobs.db"))).build();
        JobTelemetry telemetry = JobTelemetry.of(registry);
        jobs.enqueue("mail", "send", "{}");
        WorkerPool.builder(jobs, "mail").handler("send", ctx -> {
            throw new IllegalStateException("smtp down");
        }, RetryPolicy.builder().maxAttempts(1).build()).jobListener(telemetry).build().runAvailable();
        telemetry.measured(jobs.admin().stats("mail"));
        return registry;
    }

    @Test
    void promtoolAcceptsTheRules() throws Exception {
        String out = run(dir, binary("promtool").toString(), "check", "rules", rules().toString());

        assertThat(out).contains("SUCCESS: 11 rules found");
    }

    @Test
    void everySeriesTheRulesAndTheDashboardReadIsOneStaggerExports() throws Exception {
        PrometheusMeterRegistry registry = everyStaggerMeter();
        String scrape = registry.scrape();

        com.fasterxml.jackson.databind.JsonNode dashboard = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(shipped(DASHBOARD).toFile());
        StringBuilder dashboardExprs = new StringBuilder();
        dashboard.get("panels").forEach(panel -> panel.path("targets")
                .forEach(t -> dashboardExprs.append(t.get("expr").asText()).append('\n')));
        Set<String> read = new TreeSet<>();
        Matcher m = Pattern.compile("stagger_[a-z_]+").matcher(Files.readString(rules()) + dashboardExprs);
        while (m.find()) {
            read.add(m.group());
        }

        assertThat(dashboard.get("panels")).as("dashboard panels").hasSizeGreaterThan(10);
        assertThat(read).hasSizeGreaterThan(10).contains("stagger_deferred_total", "stagger_jobs_oldest_available_age_seconds");
        for (String series : read) {
            assertThat(scrape).as("the scrape holds %s", series).containsPattern("(?m)^" + series + "[{ ]");
        }
    }

    @Test
    void aRetryStormFiresStaggerRetryStormInARealPrometheusAndRecoveryResolvesIt() throws Exception {
        Path prometheus = binary("prometheus");
        PrometheusMeterRegistry registry = everyStaggerMeter();
        java.util.concurrent.atomic.AtomicBoolean storming = new java.util.concurrent.atomic.AtomicBoolean(true);
        VirtualClock clock = new VirtualClock();
        Retry payments = RetryMetrics.of(registry).instrument(Retry.of("payments",
                RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100))).build())
                .withClock(clock).withoutBudget());
        AtomicInteger attempts = new AtomicInteger();
        // Each scrape first runs a burst of calls that each need 3 attempts: a storm that grows with
        // every scrape, with no thread of its own and no sleeping.
        HttpServer target = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        target.createContext("/metrics", exchange -> {
            for (int i = 0; i < 20; i++) {
                try {
                    payments.call(() -> {
                        if (storming.get() && attempts.incrementAndGet() % 3 != 0) {
                            throw new IOException("503");
                        }
                        return "ok";
                    });
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        target.start();
        int port = freePort();
        // the shipped rules with their `for:` durations cut to 0 s and their windows to 15 s, so the
        // test need not wait minutes for an alert to fire or to resolve
        Path rules = dir.resolve("rules.yml");
        Files.writeString(rules, Files.readString(rules()).replaceAll("(?m)^(\\s+for: )\\S+$", "$10s")
                .replaceAll("\\[(5|10|15)m\\]", "[15s]"));
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                + "rule_files:\n  - " + rules + "\n"
                + "scrape_configs:\n  - job_name: stagger\n    static_configs:\n      - targets: ['127.0.0.1:"
                + target.getAddress().getPort() + "']\n");
        Process server = new ProcessBuilder(prometheus.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port)
                .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
        try {
            HttpClient http = HttpClient.newHttpClient();
            String api = "http://127.0.0.1:" + port + "/api/v1/";
            String log = dir.resolve("prometheus.log").toString();
            String firing = await(http, api + "alerts", server, log,
                    alerts -> alerts.contains("\"alertname\":\"StaggerRetryStorm\"") && alerts.contains("\"state\":\"firing\""));
            assertThat(firing).contains("\"name\":\"payments\"");

            // every dashboard panel's query returns data from what Prometheus scraped
            com.fasterxml.jackson.databind.JsonNode dashboard = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(shipped(DASHBOARD).toFile());
            for (com.fasterxml.jackson.databind.JsonNode panel : dashboard.get("panels")) {
                for (com.fasterxml.jackson.databind.JsonNode panelTarget : panel.path("targets")) {
                    String query = panelTarget.get("expr").asText().replace("$name", ".*");
                    String answer = get(http, api + "query?query=" + java.net.URLEncoder.encode(query, StandardCharsets.UTF_8));
                    assertThat(answer).as("panel '%s': %s", panel.get("title").asText(), query)
                            .contains("\"status\":\"success\"").contains("\"metric\":");
                }
            }

            storming.set(false); // the downstream recovers: every call succeeds at once
            await(http, api + "alerts", server, log, alerts -> !alerts.contains("\"alertname\":\"StaggerRetryStorm\""));
        } finally {
            server.destroy();
            if (!server.waitFor(10, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
            target.stop(0);
        }
    }

    /** Polls {@code url} until {@code done} holds of its body (at most 90 s): a real server evaluating on its own clock. */
    private static String await(HttpClient http, String url, Process server, String log,
                                java.util.function.Predicate<String> done) throws Exception {
        AtomicReference<String> body = new AtomicReference<>("");
        boolean seen = Await.within(Duration.ofSeconds(90), Duration.ofMillis(500), () -> {
            try {
                body.set(get(http, url));
                return done.test(body.get());
            } catch (IOException notUpYet) {
                assertThat(server.isAlive()).as("prometheus runs; its log:%n%s", Files.readString(Path.of(log))).isTrue();
                return false;
            }
        });
        if (seen) {
            return body.get();
        }
        throw new AssertionError("not seen within 90 s at " + url + "; last answer: " + body.get() + "\nprometheus log:\n"
                + Files.readString(Path.of(log)));
    }

    private static String get(HttpClient http, String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
