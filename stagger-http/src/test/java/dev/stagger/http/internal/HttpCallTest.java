package dev.stagger.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The exception half of the table, including failures a loopback server cannot easily produce. */
class HttpCallTest {
    private static final HttpRequest POST = HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/orders"))
            .POST(HttpRequest.BodyPublishers.ofString("{}")).build();

    private static HttpCall call(boolean idempotent, boolean sendOnce) {
        return new HttpCall(POST, idempotent, sendOnce, null, "svc", "POST /orders", StatusTable.defaults(),
                Duration.ofMinutes(5), new VirtualClock(), List.of());
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
        assertThat(call(true, false).attemptRequest(Optional.of(Duration.ofSeconds(2))).timeout())
                .contains(Duration.ofSeconds(2));
    }

    @Test
    void aShorterTimeoutSetByTheCallerIsKept() {
        HttpRequest shortOne = HttpRequest.newBuilder(POST, (n, v) -> true).timeout(Duration.ofMillis(500)).build();
        HttpCall call = new HttpCall(shortOne, true, false, null, "svc", "op", StatusTable.defaults(),
                Duration.ofMinutes(5), new VirtualClock(), List.of());
        assertThat(call.attemptRequest(Optional.of(Duration.ofSeconds(2))).timeout())
                .contains(Duration.ofMillis(500));
    }
}
