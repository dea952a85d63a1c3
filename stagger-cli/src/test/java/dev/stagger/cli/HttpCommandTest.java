package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.JettyStop;
import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code stagger http} run in-process against a scripted Jetty on 127.0.0.1. */
class HttpCommandTest {
    private record Answer(int status, Map<String, String> headers, String body) {
    }

    private record Seen(String method, String key, String body) {
    }

    private Server server;
    private ServerConnector connector;
    private final ConcurrentLinkedQueue<Answer> script = new ConcurrentLinkedQueue<>();
    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final VirtualClock clock = new VirtualClock();
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final StringWriter stderr = new StringWriter();

    @BeforeEach
    void start() throws Exception {
        server = new Server();
        connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                seen.add(new Seen(request.getMethod(), request.getHeaders().get("Idempotency-Key"),
                        Content.Source.asString(request)));
                Answer a = script.poll();
                if (a == null) {
                    a = new Answer(200, Map.of(), "hello");
                }
                response.setStatus(a.status());
                a.headers().forEach((k, v) -> response.getHeaders().put(k, v));
                response.write(true, ByteBuffer.wrap(a.body().getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        server.start();
    }

    @AfterEach
    void stop() throws Exception {
        JettyStop.stop(server);
    }

    private String url(String path) {
        return "http://127.0.0.1:" + connector.getLocalPort() + path;
    }

    private void then(int status, String body) {
        script.add(new Answer(status, Map.of(), body));
    }

    private int run(String... args) {
        HttpCommand command = new HttpCommand();
        command.clock = clock;
        command.bodyOut = stdout;
        return Main.configure(new CommandLine(command)).setErr(new PrintWriter(stderr, true)).execute(args);
    }

    private String out() {
        return stdout.toString(StandardCharsets.UTF_8);
    }

    private List<String> retryLines() {
        return stderr.toString().lines().filter(l -> l.startsWith("http_retry")).toList();
    }

    @Test
    void printsTheBodyAndExitsZeroOn2xx() {
        assertThat(run(url("/hello"))).isEqualTo(0);
        assertThat(out()).isEqualTo("hello");
        assertThat(seen).extracting(Seen::method).containsExactly("GET");
    }

    @Test
    void retriesATransientStatusWithOneLinePerRetryOnStderr() {
        then(503, "down");
        then(502, "bad gateway");
        assertThat(run(url("/items"), "--jitter", "none")).isEqualTo(0);
        assertThat(out()).isEqualTo("hello");
        assertThat(retryLines()).hasSize(2);
        assertThat(retryLines().get(0)).contains("attempt=1", "max_attempts=5", "status=503", "delay_ms=200");
        assertThat(retryLines().get(1)).contains("attempt=2", "status=502", "delay_ms=400");
        assertThat(clock.sleeps()).containsExactly(Duration.ofMillis(200), Duration.ofMillis(400));
    }

    @Test
    void honoursRetryAfter() {
        script.add(new Answer(429, Map.of("Retry-After", "3"), "slow down"));
        assertThat(run(url("/items"), "--jitter", "none")).isEqualTo(0);
        assertThat(clock.sleeps()).containsExactly(Duration.ofMillis(3200));
        assertThat(retryLines()).singleElement().asString().contains("status=429", "delay_ms=3200");
    }

    @Test
    void retriesAPostWithOneGeneratedKey() {
        then(503, "down");
        then(429, "slow down"); // a 500 would not be retried: the server is not known to honour keys
        assertThat(run("POST", url("/orders"), "--data", "{\"sku\":42}", "--base", "10ms")).isEqualTo(0);
        assertThat(seen).hasSize(3).allSatisfy(s -> {
            assertThat(s.method()).isEqualTo("POST");
            assertThat(s.body()).isEqualTo("{\"sku\":42}");
            assertThat(s.key()).isEqualTo(seen.get(0).key()).matches("\"[0-9a-f-]{36}\"");
        });
        assertThat(retryLines()).allMatch(l -> l.contains("request_id=" + seen.get(0).key().replace("\"", "")));
    }

    @Test
    void sendsTheGivenIdempotencyKeyOnEveryAttempt() {
        then(503, "down");
        assertThat(run("POST", url("/orders"), "-d", "x", "--idempotency-key", "order-42")).isEqualTo(0);
        assertThat(seen).extracting(Seen::key).containsExactly("\"order-42\"", "\"order-42\"");
    }

    @Test
    void readsTheBodyFromAFile(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("order.json"), "{\"from\": \"file\"}");
        HttpCommand command = new HttpCommand();
        command.clock = clock;
        command.bodyOut = stdout;
        int exit = new CommandLine(command).setExpandAtFiles(false).setErr(new PrintWriter(stderr, true))
                .execute("PUT", url("/orders/1"), "--data", "@" + file);
        assertThat(exit).isEqualTo(0);
        assertThat(seen).singleElement().satisfies(s -> {
            assertThat(s.method()).isEqualTo("PUT");
            assertThat(s.body()).isEqualTo("{\"from\": \"file\"}");
        });
    }

    @Test
    void readsTheBodyFromAFileWithTheLaunchersParserSettings(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("order.json"), "{\"from\": \"file\"}");
        assertThat(run("PUT", url("/orders/1"), "--data", "@" + file)).isEqualTo(0);
        assertThat(seen).extracting(Seen::body).containsExactly("{\"from\": \"file\"}");
    }

    @Test
    void exitsTwoWhenTheDataFileIsMissing(@TempDir Path dir) {
        assertThat(run("POST", url("/orders"), "--data", "@" + dir.resolve("absent.json"))).isEqualTo(HttpCommand.EXIT_USAGE);
        assertThat(seen).isEmpty();
    }

    @Test
    void exitsThreeWhenItGivesUpOnARetryableStatus() {
        for (int i = 0; i < 3; i++) {
            then(503, "still down");
        }
        assertThat(run(url("/items"), "--attempts", "3")).isEqualTo(HttpCommand.EXIT_GAVE_UP);
        assertThat(out()).isEqualTo("still down");
        assertThat(seen).hasSize(3);
    }

    @Test
    void exitsThreeWhenTheDeadlineEndsTheRetries() {
        script.add(new Answer(503, Map.of("Retry-After", "60"), "down"));
        assertThat(run(url("/items"), "--deadline", "10s")).isEqualTo(HttpCommand.EXIT_GAVE_UP);
        assertThat(seen).hasSize(1);
    }

    @Test
    void exitsFourOnANonRetryableStatusAfterOneAttempt() {
        then(422, "{\"error\":\"invalid\"}");
        assertThat(run("POST", url("/orders"), "-d", "{}")).isEqualTo(HttpCommand.EXIT_NOT_RETRYABLE);
        assertThat(out()).isEqualTo("{\"error\":\"invalid\"}");
        assertThat(seen).hasSize(1);
    }

    @Test
    void keysHonouredRetriesAKeyedPostAfterA500WithTheSameKey() {
        then(500, "oops");
        assertThat(run("POST", url("/charges"), "-d", "{}", "--keys-honoured", "--base", "10ms")).isZero();
        assertThat(seen).hasSize(2).extracting(Seen::key).doesNotContainNull().containsOnly(seen.get(0).key());
    }

    @Test
    void withoutKeysHonouredAKeyedPostIsSentOnceAfterA500AndTheMessageSaysTheServerIsNotDeclaredToHonourKeys() {
        then(500, "oops");
        assertThat(run("POST", url("/charges"), "-d", "{}", "--idempotency-key", "charge-7"))
                .isEqualTo(HttpCommand.EXIT_NOT_RETRYABLE);
        assertThat(seen).singleElement().extracting(Seen::key).isEqualTo("\"charge-7\"");
        assertThat(stderr.toString()).contains("status 500 was not retried", "carries an Idempotency-Key",
                "not declared to honour keys", "--keys-honoured").doesNotContain("carries no Idempotency-Key");
    }

    @Test
    void keysHonouredDoesNotMakeAnUnkeyedPostSafeAndTheMessageSaysItCarriesNoKey() {
        then(500, "oops");
        assertThat(run("POST", url("/charges"), "-d", "{}", "--keys", "off", "--keys-honoured"))
                .isEqualTo(HttpCommand.EXIT_NOT_RETRYABLE);
        assertThat(seen).singleElement().extracting(Seen::key).isNull();
        assertThat(stderr.toString()).contains("status 500 was not retried", "carries no Idempotency-Key", "--keys off");
    }

    @Test
    void exitsFourOnAConflictForAnUnkeyedPost() {
        then(409, "conflict");
        assertThat(run("POST", url("/orders"), "-d", "{}", "--keys", "off")).isEqualTo(HttpCommand.EXIT_NOT_RETRYABLE);
        assertThat(seen).hasSize(1);
    }

    @Test
    void exitsFourWhenRequireModeSendsAnUnkeyedPostOnce() {
        then(503, "down");
        assertThat(run("POST", url("/orders"), "-d", "{}", "--keys", "require")).isEqualTo(HttpCommand.EXIT_NOT_RETRYABLE);
        assertThat(seen).singleElement().extracting(Seen::key).isNull();
    }

    @Test
    void requireModeSaysAnUnkeyedPostWasNotRetriedBecauseItCarriesNoKey() {
        then(502, "bad gateway"); // retried for a keyed request, never for an unkeyed POST
        assertThat(run("POST", url("/orders"), "-d", "{}", "--keys", "require")).isEqualTo(HttpCommand.EXIT_NOT_RETRYABLE);
        assertThat(seen).hasSize(1);
        assertThat(stderr.toString()).contains("502", "not retried", "no Idempotency-Key", "--keys require")
                .doesNotContain("is not retryable");
    }

    @Test
    void requireModeSaysA503WasNotRetriedBecauseThePostCarriesNoKey() {
        then(503, "down"); // retried for a POST with a key, and for one without under --keys off
        assertThat(run("POST", url("/orders"), "-d", "{}", "--keys", "require", "--quiet"))
                .isEqualTo(HttpCommand.EXIT_NOT_RETRYABLE);
        assertThat(seen).singleElement().extracting(Seen::key).isNull();
        assertThat(stderr.toString().lines()).containsExactly("stagger http: status 503 was not retried because the POST "
                + "carries no Idempotency-Key: --keys require sends a request without one only once "
                + "(with a key, from --keys auto or --idempotency-key K, a 503 is retried)");
    }

    @Test
    void aNonRetryableStatusIsExplainedAsSuchEvenForAnUnkeyedPost() {
        then(422, "invalid");
        assertThat(run("POST", url("/orders"), "-d", "{}", "--keys", "require")).isEqualTo(HttpCommand.EXIT_NOT_RETRYABLE);
        assertThat(stderr.toString()).contains("status 422 is not retryable").doesNotContain("Idempotency-Key");
    }

    @Test
    void exitsFiveWhenTheServerCannotBeReached() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        assertThat(run("http://127.0.0.1:" + port + "/", "--attempts", "2")).isEqualTo(HttpCommand.EXIT_NETWORK);
        assertThat(retryLines()).singleElement().asString().contains("status=-1", "ConnectException");
    }

    @Test
    void quietHidesTheRetryLines() {
        then(503, "down");
        assertThat(run(url("/items"), "--quiet")).isEqualTo(0);
        assertThat(retryLines()).isEmpty();
    }

    @Test
    void exitsTwoOnABadDuration() {
        assertThat(run(url("/items"), "--base", "fast")).isEqualTo(HttpCommand.EXIT_USAGE);
        assertThat(seen).isEmpty();
    }

    @Test
    void exitsTwoOnAMalformedHeader() {
        assertThat(run(url("/items"), "-H", "no colon here")).isEqualTo(HttpCommand.EXIT_USAGE);
        assertThat(stderr.toString()).contains("--header");
    }

    @Test
    void exitsTwoOnANonHttpUrl() {
        assertThat(run("ftp://example.com/file")).isEqualTo(HttpCommand.EXIT_USAGE);
    }

    @Test
    void exitsTwoOnZeroAttempts() {
        assertThat(run(url("/items"), "--attempts", "0")).isEqualTo(HttpCommand.EXIT_USAGE);
        assertThat(stderr.toString()).contains("maxAttempts");
    }

    @Test
    void exitsTwoOnAnUnknownJitter() {
        assertThat(run(url("/items"), "--jitter", "lots")).isEqualTo(HttpCommand.EXIT_USAGE);
        assertThat(stderr.toString()).contains("--jitter must be none, full, equal", "got 'lots'");
    }

    @Test
    void takesTheJitterNamesOfTheOtherCommandsAndTheStarter() {
        then(503, "down");
        assertThat(run(url("/items"), "--jitter", "spread(0)")).isEqualTo(0); // a zero spread is the formula
        assertThat(clock.sleeps()).containsExactly(Duration.ofMillis(200));
        then(503, "down");
        assertThat(run(url("/items"), "--jitter", "decorrelated", "--quiet")).isEqualTo(0);
        assertThat(clock.sleeps()).hasSize(2);
        assertThat(clock.sleeps().get(1)).isBetween(Duration.ofMillis(200), Duration.ofMillis(600));
    }

    @Test
    void readsDurationsLikeEveryOtherCommand() {
        then(503, "down");
        assertThat(run(url("/items"), "--base", "1ms", "--max-delay", "1.5s", "--deadline", "1d", "--quiet")).isZero();
        assertThat(seen).hasSize(2);
    }

    @Test
    void aDurationWithoutAUnitIsRefusedBeforeAnythingIsSent() {
        assertThat(run(url("/items"), "--deadline", "5")).isEqualTo(HttpCommand.EXIT_USAGE);
        assertThat(stderr.toString()).contains("--deadline", "5s");
        assertThat(seen).isEmpty();
    }

    @Test
    void aBadDurationIsAUsageErrorNamingTheValue() {
        assertThat(run(url("/items"), "--base", "soon")).isEqualTo(HttpCommand.EXIT_USAGE);
        assertThat(stderr.toString()).contains("'soon'");
    }

    @Test
    void helpDocumentsTheExitCodes() {
        StringWriter help = new StringWriter();
        int exit = new CommandLine(new HttpCommand()).setOut(new PrintWriter(help, true)).execute("--help");
        assertThat(exit).isEqualTo(0);
        assertThat(help.toString()).contains("Exit codes:", "3  gave up on a retryable status",
                "4  non-retryable status", "5  network failure");
    }

    @Test
    void theStaggerLauncherRunsItAsTheHttpSubcommand() {
        then(503, "down");
        assertThat(Main.run("http", url("/items"), "--base", "1ms", "--quiet")).isEqualTo(0);
        assertThat(seen).hasSize(2);
    }
}
