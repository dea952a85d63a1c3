package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.http.RetryingHttpClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Panel 1: send one request through the scripted flaky downstream with the page's policy and
 * return every attempt and wait.
 */
final class SendRoute implements DemoRoute {
    private final FlakyDownstream downstream;
    private final URI downstreamUri;
    private final HttpClient http;

    SendRoute(FlakyDownstream downstream, URI downstreamUri, HttpClient http) {
        this.downstream = downstream;
        this.downstreamUri = downstreamUri;
        this.http = http;
    }

    @Override
    public Timeline.Result handle(JsonNode r) throws Exception {
        PolicyKnobs knobs = PolicyKnobs.from(r);
        double failureRate = Json.doubleField(r, "failureRate", 0.5, 0, 1);
        boolean outage = Json.boolField(r, "outage", false);
        boolean rateLimit = Json.boolField(r, "rateLimit", false);
        int slowMs = Json.intField(r, "slowMs", 0, 0, 5_000);
        int timeoutMs = Json.intField(r, "attemptTimeoutMs", 2_000, 50, 30_000);

        List<FlakyDownstream.Step> script = scripted(Json.text(r, "script", ""), slowMs);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = script.size(); i < knobs.maxAttempts(); i++) {
            if (i == 0 && rateLimit) {
                script.add(new FlakyDownstream.Step(429, 1, slowMs));
            } else if (outage || random.nextDouble() < failureRate) {
                script.add(new FlakyDownstream.Step(503, 0, slowMs));
            } else {
                script.add(new FlakyDownstream.Step(200, 0, slowMs));
            }
        }
        String run = downstream.plan(script);
        Timeline timeline = new Timeline(knobs.rawDelayNanos());
        RetryingHttpClient client = RetryingHttpClient.builder(http)
                .service("flaky-downstream")
                .policy(knobs.policy().attemptTimeout(Duration.ofMillis(timeoutMs)).build())
                .listener(timeline)
                .build();
        String answer;
        try {
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(downstreamUri.resolve("?run=" + run))
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
            answer = "HTTP " + response.statusCode();
        } catch (Exception e) {
            answer = e.getClass().getSimpleName();
        } finally {
            downstream.forget(run);
        }
        return timeline.result(answer);
    }

    /**
     * An explicit script such as "503,429,200" (429 and 503 carry no Retry-After unless written
     * "429:1"). Only final statuses (200-599): a 1xx is an interim answer, and scripting one would
     * leave the client waiting for a final answer until its timeout.
     */
    static List<FlakyDownstream.Step> scripted(String text, int slowMs) {
        List<FlakyDownstream.Step> steps = new ArrayList<>();
        if (text.isBlank()) {
            return steps;
        }
        for (String part : text.split(",")) {
            String p = part.trim();
            if (!p.matches("[2-5]\\d\\d(:\\d{1,3})?")) {
                throw new IllegalArgumentException("script must be HTTP statuses 200-599 like 503,429:1,200; got '" + p + "'");
            }
            String[] bits = p.split(":");
            steps.add(new FlakyDownstream.Step(Integer.parseInt(bits[0]), bits.length > 1 ? Integer.parseInt(bits[1]) : 0, slowMs));
            if (steps.size() > 20) {
                throw new IllegalArgumentException("script must have at most 20 steps, got more");
            }
        }
        return steps;
    }

}
