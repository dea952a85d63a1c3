package dev.stagger.cli;

import dev.stagger.Clock;
import dev.stagger.RetryPolicy;
import dev.stagger.http.HttpRetryEvent;
import dev.stagger.http.IdempotencyKeyMode;
import dev.stagger.http.RetryVerdict;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.StaggerHeaders;
import dev.stagger.http.StatusTable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code stagger http}: a curl-like client on {@link RetryingHttpClient}. The response body goes
 * to stdout, one line per retry to stderr, and the exit code says how the call ended.
 */
@Command(name = "http", mixinStandardHelpOptions = true,
        description = {"Sends one HTTP request with Stagger's retries: retries 408, 429, 503 (409, 500, 502, 504, "
                + "timeouts and resets only for requests safe to send twice: idempotent methods, or a keyed POST/PATCH "
                + "with --keys-honoured), honours Retry-After, and gives POST/PATCH one Idempotency-Key reused by "
                + "every attempt. Body to stdout, one line per retry to stderr."},
        footer = {"", "Exit codes:",
                "  0  2xx response",
                "  2  bad arguments",
                "  3  gave up on a retryable status (attempts or deadline ran out); the last body is printed",
                "  4  non-retryable status (e.g. 400, 404, 422), or one retried only for requests safe to send",
                "     twice (e.g. 500) for a POST/PATCH without an Idempotency-Key, or with one but without",
                "     --keys-honoured; under --keys require, any non-2xx status of a POST/PATCH without a key (e.g. 503);",
                "     the body is printed",
                "  5  network failure (connect, reset, timeout) after the allowed attempts, or refused by a guard",
                "  130  interrupted",
                "", "Examples:",
                "  stagger http https://api.example.com/health",
                "  stagger http POST https://api.example.com/orders --data '{\"sku\":42}' -H 'Content-Type: application/json'",
                "  stagger http POST https://api.example.com/charges --data @charge.json --keys-honoured",
                "  stagger http PUT http://127.0.0.1:8080/items/7 --data @item.json --attempts 3 --deadline 10s"})
final class HttpCommand implements Callable<Integer> {
    static final int EXIT_OK = 0;
    static final int EXIT_USAGE = 2;
    static final int EXIT_GAVE_UP = 3;
    static final int EXIT_NOT_RETRYABLE = 4;
    static final int EXIT_NETWORK = 5;
    static final int EXIT_INTERRUPTED = 130;

    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    @Parameters(arity = "1..2", paramLabel = "[METHOD] URL",
            description = "HTTP method (default GET, or POST with --data) and an http(s) URL.")
    List<String> methodAndUrl = new ArrayList<>();

    @Option(names = {"-d", "--data"}, paramLabel = "TEXT|@FILE", description = "Request body; @FILE reads it from a file.")
    @Nullable String data;

    @Option(names = {"-H", "--header"}, paramLabel = "'K: V'", description = "Request header; repeatable.")
    List<String> headers = new ArrayList<>();

    @Option(names = "--idempotency-key", paramLabel = "K",
            description = "Use this Idempotency-Key instead of a generated one.")
    @Nullable String idempotencyKey;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--keys", paramLabel = "MODE", defaultValue = "auto",
            description = "Idempotency keys for POST/PATCH: auto (generate), require (never retry unkeyed), off. Default: ${DEFAULT-VALUE}.")
    String keys;

    @Option(names = "--keys-honoured",
            description = "The server honours Idempotency-Keys (executes a repeated key once), so a keyed POST/PATCH "
                    + "is also retried after 500, 502, 504, 409, timeouts and resets.")
    boolean keysHonoured;

    @Option(names = "--attempts", paramLabel = "N", defaultValue = "5",
            description = "Total attempts, first included. Default: ${DEFAULT-VALUE}.")
    int attempts;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--base", paramLabel = "D", defaultValue = "200ms", converter = Durations.class,
            description = "First wait; doubles on each retry. Default: ${DEFAULT-VALUE}.")
    Duration base;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--max-delay", paramLabel = "D", defaultValue = "5s", converter = Durations.class,
            description = "Cap on any one wait. Default: ${DEFAULT-VALUE}.")
    Duration maxDelay;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--deadline", paramLabel = "D", defaultValue = "15s", converter = Durations.class,
            description = "Time for all attempts and waits together. Default: ${DEFAULT-VALUE}.")
    Duration deadline;

    @Option(names = "--attempt-timeout", paramLabel = "D", converter = Durations.class,
            description = "Request timeout of one attempt (never beyond the remaining deadline).")
    @Nullable Duration attemptTimeout;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--jitter", paramLabel = "KIND", defaultValue = "full",
            description = "none, full, equal, proportional (+ up to 30 %%), proportional(f), spread (±20 %%), spread(f) "
                    + "or decorrelated. Default: ${DEFAULT-VALUE}.")
    String jitter;

    @Option(names = {"-q", "--quiet"}, description = "No retry lines on stderr.")
    boolean quiet;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Where waits happen; tests put a virtual clock here. */
    Clock clock = Clock.system();

    /** Where the response body goes (raw bytes). */
    OutputStream bodyOut = System.out;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        Invocation inv;
        try {
            inv = parse();
        } catch (IllegalArgumentException | IOException bad) {
            err.println("stagger http: " + bad.getMessage());
            err.flush();
            return EXIT_USAGE;
        }
        RetryingHttpClient http = RetryingHttpClient.builder(HttpClient.newBuilder()
                        .followRedirects(HttpClient.Redirect.NORMAL)
                        .connectTimeout(Duration.ofSeconds(10))
                        .build())
                .policy(inv.policy)
                .idempotencyKeys(inv.mode)
                .keysHonoured(uri -> keysHonoured)
                .clock(clock)
                .service(inv.request.uri().getHost() == null ? "http" : inv.request.uri().getHost())
                .httpListener(event -> {
                    if (!quiet) {
                        err.println(retryLine(event));
                        err.flush();
                    }
                })
                .build();
        try {
            HttpResponse<byte[]> response = http.send(inv.request, HttpResponse.BodyHandlers.ofByteArray());
            bodyOut.write(response.body());
            bodyOut.flush();
            int status = response.statusCode();
            if (status >= 200 && status < 300) {
                return EXIT_OK;
            }
            RetryVerdict verdict = http.verdict(response);
            err.println("stagger http: " + explain(verdict, response.request(), status, http.statusTable()));
            err.flush();
            return verdict == RetryVerdict.RETRYABLE ? EXIT_GAVE_UP : EXIT_NOT_RETRYABLE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("stagger http: interrupted");
            err.flush();
            return EXIT_INTERRUPTED;
        } catch (IOException | RuntimeException e) {
            err.println("stagger http: " + describe(e));
            err.flush();
            return EXIT_NETWORK;
        }
    }

    /**
     * Why a non-2xx answer ended the call, in the client's own terms: its {@link RetryVerdict}, and
     * its status table for whether the status is one retried even for a request not safe to send twice.
     */
    private String explain(RetryVerdict verdict, HttpRequest sent, int status, StatusTable statuses) {
        return switch (verdict) {
            case RETRYABLE -> "gave up on status " + status + " (attempts or deadline ran out)";
            case STATUS_NOT_RETRYABLE -> "status " + status + " is not retryable";
            case NO_RETRY_SIGNAL -> "status " + status + " was not retried: the server answered "
                    + StaggerHeaders.NO_RETRY + " (a retry or a guard behind it already decided)";
            case NOT_SAFE_TO_REPEAT -> {
                if (sent.headers().firstValue("Idempotency-Key").isPresent()) {
                    yield "status " + status + " was not retried: the " + sent.method() + " carries an Idempotency-Key, but "
                            + "the server is not declared to honour keys, so sending it again could run it twice "
                            + "(add --keys-honoured if the server executes a repeated key once)";
                }
                if (statuses.retries(status, false)) {
                    // a status that shows the request was not processed (503): only --keys require kept it from a retry
                    yield "status " + status + " was not retried because the " + sent.method()
                            + " carries no Idempotency-Key: --keys require sends a request without one only once "
                            + "(with a key, from --keys auto or --idempotency-key K, a " + status + " is retried)";
                }
                yield "status " + status + " was not retried: the " + sent.method()
                        + " carries no Idempotency-Key, so sending it again could run it twice (--keys "
                        + keys.toLowerCase(Locale.ROOT) + "; give it a key with --keys auto or --idempotency-key K, "
                        + "and add --keys-honoured if the server executes a repeated key once)";
            }
        };
    }

    /** One retry, as the key=value fields of the {@code http_retry} log line. */
    static String retryLine(HttpRetryEvent e) {
        StringBuilder line = new StringBuilder("http_retry")
                .append(" service=").append(e.service())
                .append(" operation=\"").append(e.operation()).append('"')
                .append(" attempt=").append(e.attempt())
                .append(" max_attempts=").append(e.maxAttempts())
                .append(" status=").append(e.status())
                .append(" delay_ms=").append(e.delay().toMillis());
        if (e.requestId() != null) {
            line.append(" request_id=").append(e.requestId());
        }
        if (e.cause() != null) {
            line.append(" error=\"").append(describe(e.cause()).replace("\"", "'")).append('"');
        }
        return line.toString();
    }

    private static String describe(Throwable t) {
        String message = t.getMessage();
        return t.getClass().getSimpleName() + (message == null || message.isBlank() ? "" : ": " + message);
    }

    /** The validated request and policy. */
    private record Invocation(HttpRequest request, RetryPolicy policy, IdempotencyKeyMode mode) {
    }

    private Invocation parse() throws IOException {
        String method;
        String url;
        if (methodAndUrl.size() == 2) {
            method = methodAndUrl.get(0).toUpperCase(Locale.ROOT);
            url = methodAndUrl.get(1);
            if (!TOKEN.matcher(method).matches()) {
                throw new IllegalArgumentException("not an HTTP method: '" + methodAndUrl.get(0) + "'");
            }
        } else {
            method = data != null ? "POST" : "GET";
            url = methodAndUrl.get(0);
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("not a URL: '" + url + "'");
        }
        if (!("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))
                || uri.getHost() == null) {
            throw new IllegalArgumentException("URL must be absolute http:// or https://, got '" + url + "'");
        }
        HttpRequest.BodyPublisher body = HttpRequest.BodyPublishers.noBody();
        if (data != null) {
            byte[] bytes = data.startsWith("@") ? readFile(data.substring(1))
                    : data.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            body = HttpRequest.BodyPublishers.ofByteArray(bytes);
        }
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri).method(method, body);
        for (String h : headers) {
            int colon = h.indexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("--header must look like 'Name: value', got '" + h + "'");
            }
            builder.header(h.substring(0, colon).trim(), h.substring(colon + 1).trim());
        }
        if (idempotencyKey != null) {
            if (idempotencyKey.isBlank() || idempotencyKey.length() > 255) {
                throw new IllegalArgumentException("--idempotency-key must be 1 to 255 characters, got '" + idempotencyKey + "'");
            }
            builder.setHeader("Idempotency-Key", idempotencyKey.startsWith("\"") ? idempotencyKey : "\"" + idempotencyKey + "\"");
        }
        IdempotencyKeyMode mode = switch (keys.toLowerCase(Locale.ROOT)) {
            case "auto" -> IdempotencyKeyMode.AUTO;
            case "require" -> IdempotencyKeyMode.REQUIRE;
            case "off" -> IdempotencyKeyMode.OFF;
            default -> throw new IllegalArgumentException("--keys must be auto, require or off, got '" + keys + "'");
        };
        HttpRequest request = builder.build();
        RetryPolicy.Builder policy = RetryPolicy.builder()
                .maxAttempts(attempts)
                .backoff(BackoffFlags.backoff(base, maxDelay, jitter))
                .deadline(deadline);
        if (attemptTimeout != null) {
            policy.attemptTimeout(attemptTimeout);
        }
        return new Invocation(request, policy.build(), mode);
    }

    private static byte[] readFile(String name) throws IOException {
        Path path = Path.of(name);
        if (!Files.isReadable(path)) {
            throw new IllegalArgumentException("--data file not readable: '" + name + "'");
        }
        return Files.readAllBytes(path);
    }
}
