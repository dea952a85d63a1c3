package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stagger.Backoff;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The retry log rendered as JSON by logback's own {@link JsonEncoder}. */
class JsonLogTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONFIG = "logback-json-example.xml";

    private final VirtualClock clock = new VirtualClock();

    private Retry payments(RetryLog log) {
        return Retry.of("payments", RetryPolicy.builder().maxAttempts(3)
                        .backoff(Backoff.exponential(Duration.ofMillis(200)))
                        .retryOnResult(RetryLogTest.Response.class, r -> r.status() >= 500).build())
                .withClock(clock).withListener(log);
    }

    private static RetryLog.Builder paymentsLog() {
        return RetryLog.builder().service("payments").operation("charge")
                .status((result, failure) -> result instanceof RetryLogTest.Response r ? r.status() : null)
                .requestId((result, failure) -> result instanceof RetryLogTest.Response r ? r.requestId() : null);
    }

    private void callAlways503(Retry retry) throws Exception {
        retry.call(ScriptedOperation.on(clock).returns(Duration.ofMillis(10), new RetryLogTest.Response(503, "req-7f3a9c")));
    }

    /** logback's JsonEncoder writes the pairs as a list of one-key objects; flattened here in order. */
    private static Map<String, String> pairs(JsonNode line) {
        Map<String, String> pairs = new LinkedHashMap<>();
        for (JsonNode pair : line.get("kvpList")) {
            pair.properties().forEach(field -> pairs.put(field.getKey(), field.getValue().asText()));
        }
        return pairs;
    }

    /** A logging context of its own, so the tests never reconfigure the global one. */
    private static LoggerContext freshContext() {
        LoggerContext context = new LoggerContext();
        context.setMDCAdapter(new LogbackMDCAdapter());
        return context;
    }

    @Test
    void jsonEncoderRendersEveryKeyOfTheRetryLine() throws Exception {
        LoggerContext context = freshContext();
        Logger logger = context.getLogger(RetryLog.DEFAULT_LOGGER);
        ListAppender<ILoggingEvent> captured = new ListAppender<>();
        captured.setContext(context);
        captured.start();
        logger.addAppender(captured);
        logger.setLevel(Level.INFO);
        JsonEncoder encoder = new JsonEncoder();
        encoder.setContext(context);
        encoder.start();

        callAlways503(payments(paymentsLog().logger(logger).build()));

        JsonNode retry = JSON.readTree(encoder.encode(captured.list.get(1)));
        assertThat(retry.get("level").asText()).isEqualTo("INFO");
        assertThat(retry.get("loggerName").asText()).isEqualTo("dev.stagger.retry");
        assertThat(pairs(retry)).containsExactly(
                Map.entry("event", "retry"), Map.entry("service", "payments"), Map.entry("operation", "charge"),
                Map.entry("attempt", "2"), Map.entry("max_attempts", "3"), Map.entry("status", "503"),
                Map.entry("delay_ms", "400"), Map.entry("request_id", "req-7f3a9c"), Map.entry("reason", "result"));
        JsonNode giveUp = JSON.readTree(encoder.encode(captured.list.get(2)));
        assertThat(giveUp.get("level").asText()).isEqualTo("WARN");
        assertThat(pairs(giveUp)).containsEntry("event", "give_up").containsEntry("reason", "exhausted")
                .containsEntry("attempts", "3").containsEntry("elapsed_ms", "630");
        context.stop();
    }

    @Test
    void theReadmesLogbackConfigurationWritesOneJsonObjectPerLine() throws Exception {
        LoggerContext context = freshContext();
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        URL config = getClass().getClassLoader().getResource(CONFIG);
        configurator.doConfigure(config);
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        PrintStream original = System.out;
        System.setOut(new PrintStream(stdout, true, StandardCharsets.UTF_8));
        try {
            callAlways503(payments(paymentsLog().logger(context.getLogger(RetryLog.DEFAULT_LOGGER)).build()));
        } finally {
            System.setOut(original);
            context.stop();
        }

        List<JsonNode> lines = new ArrayList<>();
        for (String line : stdout.toString(StandardCharsets.UTF_8).split("\n")) {
            lines.add(JSON.readTree(line));
        }
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0).get("formattedMessage").asText())
                .isEqualTo("payments charge: attempt 1/3 failed (status 503), retrying in 200 ms");
        assertThat(pairs(lines.get(0))).containsEntry("event", "retry").containsEntry("delay_ms", "200")
                .containsEntry("request_id", "req-7f3a9c");
        assertThat(lines.get(2).get("level").asText()).isEqualTo("WARN");
        assertThat(pairs(lines.get(2))).containsEntry("event", "give_up");
        assertThat(lines.get(0).has("arguments")).as("arguments left out by the configuration").isFalse();
    }

    @Test
    void theReadmeShowsTheTestedLogbackConfigurationVerbatim() throws Exception {
        String config = new String(getClass().getClassLoader().getResourceAsStream(CONFIG).readAllBytes(),
                StandardCharsets.UTF_8);

        assertThat(Files.readString(Path.of("README.md"))).contains(config.strip());
    }
}
