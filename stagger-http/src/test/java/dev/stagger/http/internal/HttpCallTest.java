package dev.stagger.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.AttemptContext;
import dev.stagger.AttemptTimeoutException;
import dev.stagger.Decision;
import dev.stagger.http.StatusTable;
import dev.stagger.testing.VirtualClock;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.ArrayList;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The exception half of the table, including failures a loopback server cannot easily produce. */
class HttpCallTest {
    private static final HttpRequest POST = HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/orders"))
            .POST(HttpRequest.BodyPublishers.ofString("{}")).build();

    private static HttpCall call(boolean safe, boolean sendOnce) {
        return new HttpCall(POST, safe, sendOnce, true, null, "svc", "POST /orders", StatusTable.defaults(),
                Duration.ofMinutes(5), new VirtualClock(), List.of());
    }

    /** What the rule says for an outcome, by what sending it again would risk. */
    enum Expect { ALWAYS, UNLESS_SENT_ONCE, ONLY_IF_SAFE, NEVER }

    static Stream<Arguments> outcomes() {
        List<Arguments> rows = new ArrayList<>();
        rows.add(Arguments.of("connect refused", new ConnectException("refused"), Expect.ALWAYS));
        rows.add(Arguments.of("connect timeout", new HttpConnectTimeoutException("connect"), Expect.ALWAYS));
        rows.add(Arguments.of("request timeout", new HttpTimeoutException("request"), Expect.ONLY_IF_SAFE));
        rows.add(Arguments.of("attempt timeout", new AttemptTimeoutException(1, Duration.ofSeconds(1)), Expect.ONLY_IF_SAFE));
        rows.add(Arguments.of("reset", new IOException("Connection reset"), Expect.ONLY_IF_SAFE));
        rows.add(Arguments.of("EOF", new EOFException("EOF reached while reading"), Expect.ONLY_IF_SAFE));
        rows.add(Arguments.of("interrupted", new InterruptedException(), Expect.NEVER));
        rows.add(Arguments.of("programming error", new IllegalArgumentException("bad header"), Expect.NEVER));
        for (int status = 100; status <= 599; status++) {
            Expect expect = switch (status) {
                case 408, 429, 503 -> Expect.UNLESS_SENT_ONCE;
                case 409, 500, 502, 504 -> Expect.ONLY_IF_SAFE;
                default -> Expect.NEVER;
            };
            rows.add(Arguments.of("status " + status, status, expect));
        }
        return rows.stream();
    }

    @ParameterizedTest(name = "{0}: {2}")
    @MethodSource("outcomes")
    void eachOutcomeIsRetriedOnlyForTheRequestsItIsSafeFor(String name, Object outcome, Expect expect) {
        for (boolean safe : new boolean[] {false, true}) {
            for (boolean sendOnce : new boolean[] {false, true}) {
                if (safe && sendOnce) {
                    continue; // a request sent once is neither idempotent nor keyed
                }
                boolean retried = switch (expect) {
                    case ALWAYS -> true;
                    case UNLESS_SENT_ONCE -> !sendOnce;
                    case ONLY_IF_SAFE -> safe;
                    case NEVER -> false;
                };
                Decision decision = outcome instanceof Integer status
                        ? call(safe, sendOnce).classify(new StatusOnly(status), null, null)
                        : call(safe, sendOnce).classify(null, (Throwable) outcome, null);
                assertThat(decision.isRetry()).as("%s, safe=%s, sendOnce=%s", name, safe, sendOnce).isEqualTo(retried);
            }
        }
    }

    private static Decision.Kind classify(HttpCall call, Throwable failure) {
        return call.classify(null, failure, null).kind();
    }

    @Test
    void connectTimeoutIsAlwaysRetriedBecauseNothingWasSent() {
        assertThat(classify(call(false, false), new HttpConnectTimeoutException("connect timed out")))
                .isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void connectRefusedIsRetriedEvenForAnUnkeyedRequestThatMayBeSentOnlyOnce() {
        assertThat(classify(call(false, true), new ConnectException("refused"))).isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void connectFailureWrappedByTheAsyncClientIsStillRecognised() {
        assertThat(classify(call(false, false), new CompletionException(new IOException(new ConnectException("x")))))
                .isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void requestTimeoutIsRetriedOnlyForIdempotentRequests() {
        assertThat(classify(call(true, false), new HttpTimeoutException("request timed out")))
                .isEqualTo(Decision.Kind.RETRY);
        assertThat(classify(call(false, false), new HttpTimeoutException("request timed out")))
                .isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void resetOrEofAfterSendingIsRetriedOnlyForIdempotentRequests() {
        assertThat(classify(call(true, false), new EOFException("EOF reached while reading")))
                .isEqualTo(Decision.Kind.RETRY);
        assertThat(classify(call(false, false), new IOException("Connection reset")))
                .isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void asyncAttemptTimeoutCountsAsMaybeProcessed() {
        assertThat(classify(call(true, false), new AttemptTimeoutException(1, Duration.ofSeconds(1))))
                .isEqualTo(Decision.Kind.RETRY);
        assertThat(classify(call(false, false), new AttemptTimeoutException(1, Duration.ofSeconds(1))))
                .isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void bodyReadFailureWrappedUncheckedIsTreatedAsItsCause() {
        assertThat(classify(call(true, false), new UncheckedIOException(new IOException("closed"))))
                .isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void interruptionAndProgrammingErrorsAreNeverRetried() {
        assertThat(classify(call(true, false), new InterruptedException())).isEqualTo(Decision.Kind.STOP);
        assertThat(classify(call(true, false), new IllegalArgumentException("bad header")))
                .isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void attemptTimeoutBecomesTheRequestTimeout() {
        assertThat(call(true, false).attemptRequest(attempt(1, Optional.of(Duration.ofSeconds(2)))).timeout())
                .contains(Duration.ofSeconds(2));
    }

    @Test
    void aShorterTimeoutSetByTheCallerIsKept() {
        HttpRequest shortOne = HttpRequest.newBuilder(POST, (n, v) -> true).timeout(Duration.ofMillis(500)).build();
        HttpCall call = new HttpCall(shortOne, true, false, true, null, "svc", "op", StatusTable.defaults(),
                Duration.ofMinutes(5), new VirtualClock(), List.of());
        assertThat(call.attemptRequest(attempt(1, Optional.of(Duration.ofSeconds(2)))).timeout())
                .contains(Duration.ofMillis(500));
    }

    /** An attempt whose deadline and timeout are both {@code timeout}. */
    private static AttemptContext attempt(int n, Optional<Duration> timeout) {
        return new AttemptContext() {
            @Override public String name() { return "svc"; }
            @Override public int attempt() { return n; }
            @Override public int maxAttempts() { return 3; }
            @Override public Duration elapsed() { return Duration.ZERO; }
            @Override public Optional<Duration> remaining() { return timeout; }
            @Override public Optional<Duration> attemptTimeout() { return timeout; }
            @Override public Throwable lastFailure() { return null; }
        };
    }
}
