package dev.stagger.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo's {@code /metrics} is what the shipped alert rules read: after the breaker lab's
 * budget run (every third call wants a retry), the scrape shows the retries and the budget's
 * refusals in the series {@code StaggerRetryStorm} and the guards' alerts use.
 */
class DemoMetricsTest {
    private static final Pattern SAMPLE = Pattern.compile("(?m)^(stagger_[a-z_]+)\\{([^}]*)} (\\S+)$");

    @TempDir
    Path data;

    @Test
    void aStormInTheDemoShowsInTheSeriesTheAlertRulesRead() throws Exception {
        try (DemoServer server = DemoServer.start("127.0.0.1", 0, data)) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + server.port();
            HttpResponse<String> hammered = http.send(HttpRequest.newBuilder(URI.create(base + "/api/budget"))
                    .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"calls\":300}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(hammered.statusCode()).as(hammered.body()).isEqualTo(200);

            String scrape = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();

            double calls = sum(scrape, "stagger_calls_total", "name=\"downstream\"");
            double attempts = sum(scrape, "stagger_attempts_total", "name=\"downstream\"");
            assertThat(calls).isEqualTo(300);
            assertThat(attempts / calls).as("attempts per call: every third call wants a retry").isGreaterThan(1.05);
            assertThat(sum(scrape, "stagger_budget_refusals_total", "name=\"downstream\"")).as("the budget refused some").isPositive();
            Set<String> stormSeries = new TreeSet<>();
            Matcher names = Pattern.compile("stagger_[a-z_]+").matcher(rule("StaggerRetryStorm")
                    + rule("StaggerRetryBudgetRefusing") + rule("StaggerCircuitOpen"));
            while (names.find()) {
                stormSeries.add(names.group());
            }
            assertThat(stormSeries).contains("stagger_attempts_total", "stagger_calls_total", "stagger_call_attempts_bucket");
            for (String series : stormSeries) {
                assertThat(scrape).as("the demo's /metrics holds %s", series).containsPattern("(?m)^" + series + "[{ ]");
            }
        }
    }

    private static double sum(String scrape, String name, String label) {
        double total = 0;
        Matcher m = SAMPLE.matcher(scrape);
        while (m.find()) {
            if (m.group(1).equals(name) && m.group(2).contains(label)) {
                total += Double.parseDouble(m.group(3));
            }
        }
        return total;
    }

    /** The text of one rule of the shipped file, from its {@code - alert:} line to the next. */
    private static String rule(String alert) throws Exception {
        String rules;
        try (InputStream in = DemoMetricsTest.class.getResourceAsStream("/dev/stagger/observability/alerting/stagger-alerts.yml")) {
            assertThat(in).isNotNull();
            rules = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        int start = rules.indexOf("- alert: " + alert + "\n");
        assertThat(start).as("rule %s", alert).isNotNegative();
        int end = rules.indexOf("- alert: ", start + 1);
        return rules.substring(start, end < 0 ? rules.length() : end);
    }
}
