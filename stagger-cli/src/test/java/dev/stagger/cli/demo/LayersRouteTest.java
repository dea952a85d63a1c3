package dev.stagger.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The data behind panel 8, over real HTTP: {@code /api/layers}. */
class LayersRouteTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path data;

    static DemoServer server;
    static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        server = DemoServer.start("127.0.0.1", 0, data);
        http = HttpClient.newHttpClient();
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private static HttpResponse<String> post(String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/api/layers"))
                        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theSwitchesChooseTheGuardsAndTheAnswerCarriesWhatThePanelDraws() throws Exception {
        HttpResponse<String> naive = post("{\"tiers\":\"2\",\"attempts\":\"4\"}");
        assertThat(naive.statusCode()).isEqualTo(200);
        JsonNode n = JSON.readTree(naive.body());
        assertThat(n.get("setup").asText()).isEqualTo("naive");
        assertThat(n.get("naiveFanOut").asInt()).isEqualTo(16);
        assertThat(n.get("maxBottomAttemptsPerRequest").asInt()).isEqualTo(16);
        assertThat(n.get("arrivalsPerRequest")).hasSize(3);
        assertThat(n.get("failure").asText()).isEqualTo("down from 5 s to 25 s");

        JsonNode g = JSON.readTree(post("{\"oneLayer\":true,\"deadline\":true,\"budget\":true,\"failure\":\"rate\"}").body());
        assertThat(g.get("setup").asText()).isEqualTo("stagger");
        assertThat(g.get("failure").asText()).isEqualTo("fails half the requests");
        assertThat(g.get("maxBottomAttemptsPerRequest").asInt()).isLessThanOrEqualTo(3);
        assertThat(g.get("lateAttemptsPerRequest").asDouble()).isZero();
        assertThat(g.get("successShare").asDouble()).isPositive();
        for (String field : new String[] {"bottomAttemptsPerRequest", "p50Ms", "p90Ms", "p99Ms", "requests", "timedOut"}) {
            assertThat(g.get(field).isNumber()).as(field).isTrue();
        }
    }

    @Test
    void badInputIsA400NamingTheFieldAndTheValue() throws Exception {
        String[][] cases = {
                {"{\"tiers\":9}", "tiers", "9"},
                {"{\"attempts\":\"many\"}", "attempts", "many"},
                {"{\"failure\":\"fire\"}", "failure", "fire"},
                {"{\"budget\":\"yes\"}", "budget", "yes"}};
        for (String[] c : cases) {
            HttpResponse<String> r = post(c[0]);
            assertThat(r.statusCode()).as(c[0]).isEqualTo(400);
            assertThat(JSON.readTree(r.body()).path("error").asText()).as(c[0]).contains(c[1]).contains(c[2]);
        }
    }
}
