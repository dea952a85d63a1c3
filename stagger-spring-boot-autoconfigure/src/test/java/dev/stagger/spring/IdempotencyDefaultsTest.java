package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The idempotency filter turned on with nothing else set, in a service on loopback without Spring
 * Security, as a new user writes it: the actuator's POSTs still work, the application's POSTs need
 * a key, and the log says at startup which properties to set.
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyDefaultsTest {
    private static final String EXCLUDED = "spring.autoconfigure.exclude="
            + "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration,"
            + "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
            + TestAutoConfigurations.JPA_AND_JOOQ;

    @RestController
    static class Orders {
        @PostMapping("/orders")
        String place(@RequestBody String order) {
            return "placed " + order;
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Orders.class)
    static class App {
    }

    private final HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static ConfigurableApplicationContext start(String... properties) {
        return new SpringApplicationBuilder(App.class)
                .properties("server.address=127.0.0.1", "server.port=0", "spring.main.banner-mode=off",
                        "management.endpoints.web.exposure.include=stagger",
                        "stagger.circuit-breakers.maintenance.consecutive-failures=5",
                        "stagger.idempotency.enabled=true", "stagger.idempotency.store=memory", EXCLUDED)
                .properties(properties)
                .run();
    }

    private HttpResponse<String> post(ConfigurableApplicationContext app, String path, String body) throws Exception {
        String port = app.getEnvironment().getProperty("local.server.port");
        return jdk.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theActuatorStaysOutsideTheFilterAndStartupWarnsOfMissingPathsAndClientIdentity(CapturedOutput output)
            throws Exception {
        try (ConfigurableApplicationContext app = start()) {
            HttpResponse<String> forced = post(app, "/actuator/stagger/maintenance", "{\"state\":\"open\"}");
            HttpResponse<String> order = post(app, "/orders", "{}");

            assertThat(forced.statusCode()).as(forced.body()).isEqualTo(200);
            assertThat(JsonPath.<String>read(forced.body(), "$.state")).isEqualTo("open");
            assertThat(order.statusCode()).isEqualTo(400); // the application's own POSTs still need a key
            assertThat(order.body()).contains("key-missing");
        }
        assertThat(output.getOut())
                .contains("WARN").contains("stagger.idempotency.paths is not set: the idempotency filter covers every "
                        + "path (/*) except /actuator (stagger.idempotency.exclude-paths)")
                .contains("stagger.idempotency.scope-header is not set and no Spring Security filter chain names the "
                        + "client: every request with an Idempotency-Key will be refused with 400 no-client-scope");
    }

    @Test
    void pathsAndAScopeHeaderSetStartWithoutWarnings(CapturedOutput output) {
        try (ConfigurableApplicationContext app = start("stagger.idempotency.paths=/orders",
                "stagger.idempotency.scope-header=X-Api-Key")) {
            assertThat(app.isRunning()).isTrue();
        }
        assertThat(output.getOut()).doesNotContain("stagger.idempotency.paths is not set")
                .doesNotContain("stagger.idempotency.scope-header is not set");
    }

    @Test
    void excludePathsReplacesTheActuatorDefault() throws Exception {
        try (ConfigurableApplicationContext app = start("stagger.idempotency.exclude-paths=/orders")) {
            assertThat(post(app, "/orders", "{}").statusCode()).isEqualTo(200);
            assertThat(post(app, "/actuator/stagger/maintenance", "{\"state\":\"open\"}").body()).contains("key-missing");
        }
    }
}
