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

/** The demo's JSON API over real HTTP: bad input is a 400 naming the field, never a 500, a silent default or a wait. */
class DemoApiTest {
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

    private record Answer(int status, JsonNode body) {
        String error() {
            return body.path("error").asText();
        }
    }

    private static Answer post(String endpoint, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/api/" + endpoint))
                        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), JSON.readTree(r.body()));
    }

    @Test
    void everyEndpointAnswersABadNumberWith400NamingTheFieldAndTheValue() throws Exception {
        String[][] cases = {
                {"send", "{\"maxAttempts\":\"lots\"}", "maxAttempts", "lots"},
                {"send", "{\"failureRate\":1.5}", "failureRate", "1.5"},
                {"calculator", "{\"retries\":0}", "retries", "0"},
                {"herd", "{\"clients\":100000}", "clients", "100000"},
                {"hammer", "{\"calls\":-1}", "calls", "-1"},
                {"pay", "{\"withKey\":\"maybe\"}", "withKey", "maybe"},
                {"jobs-enqueue", "{\"count\":201}", "count", "201"},
                {"metastable", "{\"seconds\":600}", "seconds", "600"},
                {"metastable", "{\"retries\":\"forever\"}", "retries", "forever"},
                {"metastable", "{\"throttle\":\"yes\"}", "throttle", "yes"}};
        for (String[] c : cases) {
            Answer a = post(c[0], c[1]);
            assertThat(a.status()).as(c[0] + " " + c[1]).isEqualTo(400);
            assertThat(a.error()).as(c[0] + " " + c[1]).contains(c[2]).contains(c[3]);
        }
    }

    @Test
    void aChoiceGivenAnObjectIsRefusedRatherThanReplacedByTheDefault() throws Exception {
        Answer a = post("send", "{\"jitter\":{\"kind\":\"none\"}}");
        assertThat(a.status()).isEqualTo(400);
        assertThat(a.error()).contains("jitter").contains("kind");
    }

    @Test
    void aScriptGivenAsAListIsRefusedRatherThanIgnored() throws Exception {
        Answer a = post("send", "{\"script\":[\"503\",\"200\"]}");
        assertThat(a.status()).isEqualTo(400);
        assertThat(a.error()).contains("script").contains("503");
    }

    @Test
    void aNumberGivenAnObjectNamesTheValueItGot() throws Exception {
        Answer a = post("send", "{\"failureRate\":{\"p\":0.5}}");
        assertThat(a.status()).isEqualTo(400);
        assertThat(a.error()).contains("failureRate").contains("\"p\"");
    }

    @Test
    void anInterimStatusCannotBeScriptedBecauseTheClientWouldWaitForAFinalOne() throws Exception {
        for (String interim : new String[] {"100", "101", "199"}) {
            Answer a = post("send", "{\"script\":\"" + interim + "\",\"maxAttempts\":1}");
            assertThat(a.status()).as(interim).isEqualTo(400);
            assertThat(a.error()).as(interim).contains("script").contains(interim);
        }
    }

    @Test
    void aBodyThatIsNotAJsonObjectIsRefused() throws Exception {
        for (String body : new String[] {"[1,2]", "\"x\"", "42", "null"}) {
            Answer a = post("send", body);
            assertThat(a.status()).as(body).isEqualTo(400);
            assertThat(a.error()).as(body).contains("JSON object");
        }
    }

    @Test
    void theCalculatorRefusesACapBelowTheBaseAsTheSendPanelDoes() throws Exception {
        for (String endpoint : new String[] {"calculator", "send"}) {
            Answer a = post(endpoint, "{\"baseMs\":1000,\"capMs\":10}");
            assertThat(a.status()).as(endpoint).isEqualTo(400);
            assertThat(a.error()).as(endpoint).contains("capMs").contains("10");
        }
    }

    @Test
    void aBodyThatIsNotJsonIsRefused() throws Exception {
        Answer a = post("calculator", "{retries: 5");
        assertThat(a.status()).isEqualTo(400);
        assertThat(a.error()).contains("not JSON");
    }

    @Test
    void goodValuesStillWork() throws Exception {
        Answer a = post("send", "{\"script\":\"503,200\",\"baseMs\":1,\"jitter\":\"none\",\"maxAttempts\":3}");
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.body().path("reason").asText()).isEqualTo("RECOVERED");
        assertThat(a.body().path("attempts")).hasSize(2);
    }
}
