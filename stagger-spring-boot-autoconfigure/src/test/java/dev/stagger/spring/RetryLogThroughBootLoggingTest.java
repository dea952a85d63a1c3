package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.jayway.jsonpath.JsonPath;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The starter's retry log lines in a Boot application, written by Boot's logging system (logback,
 * initialised by {@code SpringApplication} from {@code logging.*} properties): one line per retry
 * at INFO and one per give-up at WARN, logger {@code dev.stagger.retry}, with RetryLog's key-value
 * pairs as JSON fields under Boot's structured logging.
 */
@ExtendWith(OutputCaptureExtension.class)
class RetryLogThroughBootLoggingTest {

    /** A downstream that fails its first {@code failures} calls. */
    public static class Payments {
        private final AtomicInteger calls = new AtomicInteger();
        private volatile int failures;

        /** Calls the proxy's target: fields of a CGLIB proxy are not the bean's. */
        public void failFirst(int failures) {
            this.failures = failures;
            calls.set(0);
        }

        public int calls() {
            return calls.get();
        }

        @StaggerRetry("payments")
        public String charge() {
            if (calls.incrementAndGet() <= failures) {
                throw new IllegalStateException("downstream unavailable");
            }
            return "charged";
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({StaggerObservabilityAutoConfiguration.class, StaggerAutoConfiguration.class})
    static class App {
        @Bean
        Payments payments() {
            return new Payments();
        }
    }

    private static ConfigurableApplicationContext start(String... properties) {
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("spring.main.banner-mode=off",
                        "stagger.retries.payments.max-attempts=3",
                        "stagger.retries.payments.backoff.type=none")
                .properties(properties)
                .run();
    }

    /** Recovers on the third attempt, then a call that fails every attempt. */
    private static int recoverThenGiveUp(ConfigurableApplicationContext context) {
        Payments payments = context.getBean(Payments.class);
        payments.failFirst(2);
        assertThat(payments.charge()).isEqualTo("charged");
        payments.failFirst(Integer.MAX_VALUE);
        assertThatThrownBy(payments::charge).isInstanceOf(IllegalStateException.class);
        return payments.calls();
    }

    /** The JSON lines of the logger {@code dev.stagger.retry}, parsed (Boot's {@code logstash} format). */
    private static List<Map<String, Object>> retryLogJson(CapturedOutput output) {
        return output.getOut().lines().filter(line -> line.startsWith("{"))
                .map(line -> JsonPath.parse(line).<Map<String, Object>>read("$"))
                .filter(line -> "dev.stagger.retry".equals(line.get("logger_name")))
                .toList();
    }

    private Properties systemProperties;

    /**
     * Boot's logging system publishes its settings as system properties: each test gets back the
     * JVM's own. And it initialises logback once until the application that did so closes: a test
     * context cached by another test class (ShopApplicationTest's) would keep its configuration, so
     * each test here marks it uninitialised, and its own application configures it from scratch.
     */
    @BeforeEach
    void saveSystemPropertiesAndResetBootsLogging() {
        systemProperties = (Properties) System.getProperties().clone();
        LoggingSystem.get(getClass().getClassLoader()).cleanUp();
    }

    @AfterEach
    void restoreSystemProperties() {
        System.setProperties(systemProperties);
    }

    @Test
    void eachRetryAndTheGiveUpAreJsonLinesWithTheirKeyValuePairsUnderBootsStructuredLogging(CapturedOutput output) {
        try (ConfigurableApplicationContext context = start("logging.structured.format.console=logstash")) {
            assertThat(recoverThenGiveUp(context)).isEqualTo(3);
        }
        List<Map<String, Object>> lines = retryLogJson(output);
        assertThat(lines).extracting(line -> line.get("level"), line -> line.get("event"), line -> line.get("attempt"))
                .containsExactly(tuple("INFO", "retry", 1), tuple("INFO", "retry", 2),   // the call that recovered
                        tuple("INFO", "retry", 1), tuple("INFO", "retry", 2),            // the call that gave up
                        tuple("WARN", "give_up", null));
        assertThat(lines.get(0)).containsEntry("service", "payments").containsEntry("max_attempts", 3)
                .containsEntry("delay_ms", 0).containsEntry("reason", "IllegalStateException")
                .containsEntry("message", "payments: attempt 1/3 failed (IllegalStateException), retrying in 0 ms");
        assertThat(lines.get(4)).containsEntry("service", "payments").containsEntry("reason", "exhausted")
                .containsEntry("attempts", 3).containsEntry("max_attempts", 3)
                .containsEntry("error", "IllegalStateException").containsKey("elapsed_ms");
    }

    @Test
    void withBootsDefaultConsolePatternTheRetryIsAnInfoLineAndTheGiveUpAWarnLine(CapturedOutput output) {
        try (ConfigurableApplicationContext context = start()) {
            recoverThenGiveUp(context);
        }
        List<String> lines = output.getOut().lines().filter(line -> line.contains(" dev.stagger.retry ")).toList();
        assertThat(lines).hasSize(5);
        assertThat(lines.get(0)).contains(" INFO ")
                .endsWith(": payments: attempt 1/3 failed (IllegalStateException), retrying in 0 ms");
        assertThat(lines.get(4)).contains(" WARN ").contains(": payments: giving up after 3/3 attempts in ")
                .endsWith(" ms (exhausted)");
    }

    @Test
    void aConsolePatternWithKvpPrintsThePairs(CapturedOutput output) {
        try (ConfigurableApplicationContext context = start("logging.pattern.console=%level %logger %kvp%n")) {
            recoverThenGiveUp(context);
        }
        assertThat(output.getOut().lines().filter(line -> line.contains(" dev.stagger.retry ")))
                .startsWith("INFO dev.stagger.retry event=\"retry\" service=\"payments\" attempt=\"1\" max_attempts=\"3\""
                        + " delay_ms=\"0\" reason=\"IllegalStateException\"")
                .last().asString().startsWith("WARN dev.stagger.retry event=\"give_up\" service=\"payments\" reason=\"exhausted\""
                        + " attempts=\"3\" max_attempts=\"3\" elapsed_ms=");
    }

    @Test
    void bootsLoggingLevelsApplyAtWarnOnlyTheGiveUpIsWritten(CapturedOutput output) {
        try (ConfigurableApplicationContext context = start("logging.structured.format.console=logstash",
                "logging.level.dev.stagger.retry=warn")) {
            assertThat(recoverThenGiveUp(context)).isEqualTo(3);
        }
        assertThat(retryLogJson(output)).extracting(line -> line.get("event")).containsExactly("give_up");
    }

    @Test
    void stopsWithTheProperty(CapturedOutput output) {
        try (ConfigurableApplicationContext context = start("logging.structured.format.console=logstash",
                "stagger.logging.enabled=false")) {
            assertThat(recoverThenGiveUp(context)).isEqualTo(3); // retried as before, silently
        }
        assertThat(output.getOut()).contains("\"message\":\"Started "); // Boot's logging did write, as JSON
        assertThat(retryLogJson(output)).isEmpty();
    }
}
