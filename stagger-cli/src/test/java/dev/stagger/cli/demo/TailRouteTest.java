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

/** The data behind panel 9, over real HTTP: {@code /api/tail}. */
class TailRouteTest {
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
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/api/tail"))
                        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theAnswerCarriesEverySetUpAtBothLoadsForTheTailAsked() throws Exception {
        HttpResponse<String> response = post("{\"tailShare\":\"0.05\",\"tailFactor\":\"10\"}");

        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode a = JSON.readTree(response.body());
        assertThat(a.get("tailShare").asDouble()).isEqualTo(0.05);
        assertThat(a.get("tailFactor").asDouble()).isEqualTo(10);
        assertThat(a.get("rows")).hasSize(10);
        JsonNode first = a.get("rows").get(0);
        assertThat(first.get("setup").asText()).isEqualTo("none");
        assertThat(first.get("load").asText()).isEqualTo("normal");
        for (String field : new String[] {"p50Ms", "p99Ms", "p999Ms", "extraLoad", "hedges", "hedgesWon", "calls"}) {
            assertThat(first.get(field).isNumber()).as(field).isTrue();
        }
    }

    @Test
    void aTailShareOutOfRangeIsRefusedNamingIt() throws Exception {
        HttpResponse<String> response = post("{\"tailShare\":\"0.9\"}");

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(response.body()).get("error").asText()).startsWith("tailShare must be in [0.0, 0.2], got 0.9");
    }
}
