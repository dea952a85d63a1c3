package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.jayway.jsonpath.JsonPath;
import dev.stagger.Retry;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

/**
 * {@code /actuator/staggerevents} over HTTP on loopback: what named retries and breakers did,
 * newest first, per name, filtered by type, each name keeping its last {@code stagger.events.size}.
 * Each test uses names of its own, so the shared context's events do not mix.
 */
@SpringBootTest(classes = StaggerEventsEndpointTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "server.address=127.0.0.1",
                "management.endpoints.web.exposure.include=staggerevents",
                "stagger.events.size=8",
                "stagger.retries.default.max-attempts=3",
                "stagger.retries.default.backoff.type=none",
                "stagger.retries.default.budget=none",
                "stagger.retries.payments.max-attempts=1",
                "stagger.circuit-breakers.payments.consecutive-failures=1",
                "spring.autoconfigure.exclude=org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
                        + "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration,"
                        + "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration,"
                        + "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration,"
                        + "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration,"
                        + "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration,"
                        + TestAutoConfigurations.JPA_AND_JOOQ
        })
class StaggerEventsEndpointTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        VirtualClock clock() {
            return new VirtualClock();
        }
    }

    @LocalServerPort
    int port;
    @Autowired
    StaggerRegistry registry;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/staggerevents" + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static void failEveryAttempt(Retry retry) {
        assertThatThrownBy(() -> retry.call(() -> {
            throw new IllegalStateException("down");
        })).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aCallThatGaveUpShowsItsAttemptsRetriesAndEndNewestFirst() throws Exception {
        failEveryAttempt(registry.retry("reports"));

        String json = get("/reports").body();

        assertThat(JsonPath.<List<String>>read(json, "$.events[*].type"))
                .containsExactly("give-up", "attempt", "retry", "attempt", "retry", "attempt");
        assertThat(JsonPath.<String>read(json, "$.events[0].reason")).isEqualTo("exhausted");
        assertThat(JsonPath.<Integer>read(json, "$.events[0].attempts")).isEqualTo(3);
        assertThat(JsonPath.<String>read(json, "$.events[1].failure")).isEqualTo("java.lang.IllegalStateException");
        assertThat(JsonPath.<Integer>read(json, "$.events[2].nextAttempt")).isEqualTo(3);
    }

    @Test
    void eventsNameTheExceptionsClassAndNeverItsMessage() throws Exception {
        failEveryAttempt(registry.retry("messages"));

        assertThat(get("/messages").body()).contains("java.lang.IllegalStateException").doesNotContain("down");
    }

    @Test
    void eachNameKeepsOnlyItsLastEvents() throws Exception {
        Retry inventory = registry.retry("inventory");
        failEveryAttempt(inventory);
        failEveryAttempt(inventory); // 12 events; 8 kept

        List<String> types = JsonPath.read(get("/inventory").body(), "$.events[*].type");

        assertThat(types).containsExactly("give-up", "attempt", "retry", "attempt", "retry", "attempt", "give-up", "attempt");
    }

    @Test
    void aRefusalByTheOpenBreakerAndTheBreakersTransitionAreShownByType() throws Exception {
        Retry payments = registry.retry("payments");
        failEveryAttempt(payments); // one failure opens the breaker
        assertThatThrownBy(() -> payments.call(() -> "never run")).isInstanceOf(dev.stagger.CircuitOpenException.class);

        String refusals = get("/payments?type=refusal").body();
        String transitions = get("/payments?type=transition").body();

        assertThat(JsonPath.<List<String>>read(refusals, "$.events[*].reason")).containsExactly("circuit-open");
        assertThat(JsonPath.<List<String>>read(transitions, "$.events[*].to")).containsExactly("open");
        assertThat(JsonPath.<List<String>>read(transitions, "$.events[*].from")).containsExactly("closed");
    }

    @Test
    void withoutANameEveryNamesEventsOfTheTypeAreShown() throws Exception {
        failEveryAttempt(registry.retry("first"));
        failEveryAttempt(registry.retry("second"));

        List<String> names = JsonPath.read(get("?type=give-up").body(), "$.events[*].name");

        assertThat(names).containsSubsequence("second", "first");
    }

    @Test
    void anUnknownTypeIsABadRequestNamingTheTypes() throws Exception {
        HttpResponse<String> answer = get("?type=gaveup");

        assertThat(answer.statusCode()).isEqualTo(400);
        assertThat(JsonPath.<String>read(answer.body(), "$.message")).contains("give-up").contains("gaveup");
    }
}
