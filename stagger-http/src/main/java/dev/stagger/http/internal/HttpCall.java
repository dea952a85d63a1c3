package dev.stagger.http.internal;

import dev.stagger.AttemptContext;
import dev.stagger.AttemptTimeoutException;
import dev.stagger.Classifier;
import dev.stagger.Clock;
import dev.stagger.Decision;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.http.HttpRetryEvent;
import dev.stagger.http.HttpRetryListener;
import dev.stagger.http.HttpTransport;
import dev.stagger.http.RetryVerdict;
import dev.stagger.http.StaggerHeaders;
import dev.stagger.http.StatusTable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * One logical HTTP call (all its attempts): classifies each attempt's outcome for the core retry
 * loop, releases the bodies of responses that are retried or refused, and reports each scheduled
 * retry to the client's listeners. Told of one attempt at a time (a hedged call's attempts run
 * at once, but the engine reports their outcomes one by one). The transport ({@code
 * java.net.http} or another, through {@link HttpTransport}) only reads statuses and headers and
 * releases bodies: the rules are the same for every transport.
 */
public final class HttpCall implements Classifier, RetryListener {
    private final @Nullable HttpRequest request;
    private final String method;
    private final URI uri;
    private final HttpTransport<Object> transport;
    private final boolean safe;
    private final boolean sendOnce;
    private final boolean trustsSignals;
    private final @Nullable String requestId;
    private final String service;
    private final String operation;
    private final StatusTable statuses;
    private final Duration maxRetryAfter;
    private final Clock clock;
    private final List<HttpRetryListener> listeners;
    private volatile @Nullable Object lastResult;
    private volatile boolean lastAccepted;

    /**
     * @param request the request every attempt sends (with any generated key already attached)
     * @param safe whether sending it twice is harmless (an idempotent method, or a key the server
     *     is declared to honour)
     * @param sendOnce whether only connect failures may be retried (an unkeyed non-idempotent
     *     request under {@code REQUIRE})
     * @param trustsSignals whether the server's {@code Stagger-No-Retry} is honoured
     */
    public HttpCall(HttpRequest request, boolean safe, boolean sendOnce, boolean trustsSignals, @Nullable String requestId,
                    String service, String operation, StatusTable statuses, Duration maxRetryAfter, Clock clock,
                    List<HttpRetryListener> listeners) {
        this(request, request.method(), request.uri(), new JdkTransport(clock), safe, sendOnce, trustsSignals,
                requestId, service, operation, statuses, maxRetryAfter, clock, listeners);
    }

    /**
     * A call sent through another transport: {@code request} is null, {@code method} and
     * {@code uri} describe it for the listeners.
     */
    @SuppressWarnings("unchecked")
    public HttpCall(@Nullable HttpRequest request, String method, URI uri, HttpTransport<?> transport, boolean safe,
                    boolean sendOnce, boolean trustsSignals, @Nullable String requestId, String service, String operation,
                    StatusTable statuses, Duration maxRetryAfter, Clock clock, List<HttpRetryListener> listeners) {
        this.request = request;
        this.method = method;
        this.uri = uri;
        this.transport = (HttpTransport<Object>) transport;
        this.safe = safe;
        this.sendOnce = sendOnce;
        this.trustsSignals = trustsSignals;
        this.requestId = requestId;
        this.service = service;
        this.operation = operation;
        this.statuses = statuses;
        this.maxRetryAfter = maxRetryAfter;
        this.clock = clock;
        this.listeners = listeners;
    }

    /**
     * The request for an attempt ({@code java.net.http} calls only): the call's request with the
     * {@code Stagger-Attempt} header set to the attempt number, {@code Stagger-Deadline-Ms} to the
     * attempt's remaining deadline when it has one, and its timeout bounded by the attempt's
     * timeout.
     */
    public HttpRequest attemptRequest(AttemptContext context) {
        // only a call sent through the JDK client has a request (attempts through another transport build their own)
        HttpRequest request = Objects.requireNonNull(this.request, "request");
        HttpRequest.Builder builder = HttpRequest.newBuilder(request, (name, value) -> true);
        StaggerHeaders.forAttempt(context, builder::setHeader);
        Optional<Duration> timeout = context.attemptTimeout();
        if (timeout.isPresent()) {
            Duration t = timeout.get();
            if (t.compareTo(Duration.ofMillis(1)) < 0) {
                t = Duration.ofMillis(1); // HttpRequest needs a positive timeout; the deadline check ends the call anyway
            }
            Optional<Duration> own = request.timeout();
            if (own.isEmpty() || own.get().compareTo(t) > 0) {
                builder.timeout(t);
            }
        }
        return builder.build();
    }

    @Override
    public Decision classify(@Nullable Object result, @Nullable Throwable failure, AttemptContext context) {
        if (failure == null) {
            if (result == null) {
                return Decision.accept();
            }
            int status = transport.statusCode(result);
            if (status < 400) {
                return Decision.accept();
            }
            if (statusVerdict(statuses, status, safe, sendOnce, noRetrySignal(result)) != RetryVerdict.RETRYABLE) {
                return Decision.stop();
            }
            Optional<Duration> hint = RetryAfter.parse(transport.header(result, "Retry-After").orElse(null),
                    clock.currentTimeMillis(), maxRetryAfter);
            return hint.isPresent() && !hint.get().isZero() ? Decision.retryAfter(hint.get()) : Decision.retry();
        }
        Throwable t = unwrap(failure);
        if (t instanceof InterruptedException || t instanceof Error) {
            return Decision.stop();
        }
        if (neverReachedServer(t)) {
            return Decision.retry();
        }
        if (sendOnce || !safe) {
            return Decision.stop(); // it may have been processed: only a safe request is sent again
        }
        return t instanceof IOException || t instanceof AttemptTimeoutException ? Decision.retry() : Decision.stop();
    }

    /**
     * Whether the server accepted an attempt, for an {@link dev.stagger.AdaptiveThrottle}: a
     * failure (timeout, reset, refused connection), a status the table retries for a safe request
     * (408, 429, 500, 502, 503, 504 by default) and any {@code 429} or {@code 503} carrying
     * {@code Retry-After} are rejections, whether or not this request may be retried; any other
     * response is the server accepting it.
     */
    public boolean acceptedByServer(@Nullable Object result, @Nullable Throwable failure) {
        if (failure != null) {
            return false;
        }
        if (result == null) {
            return true;
        }
        int status = transport.statusCode(result);
        if (statuses.retries(status, true)) {
            return false;
        }
        return !((status == 429 || status == 503) && transport.header(result, "Retry-After").isPresent());
    }

    /** Whether {@code response} carries {@code Stagger-No-Retry} from a server this call trusts. */
    private boolean noRetrySignal(Object response) {
        return trustsSignals && transport.header(response, StaggerHeaders.NO_RETRY).isPresent();
    }

    /**
     * The status rule, the one both the retry loop ({@link #classify}) and
     * {@code RetryingHttpClient.verdict} apply: whether a response with {@code status} is retried
     * for a request that is ({@code safe}) or is not safe to send twice and may ({@code sendOnce})
     * be sent only once, and whose response carries ({@code noRetry}) a trusted
     * {@code Stagger-No-Retry}; and if not, why.
     */
    public static RetryVerdict statusVerdict(StatusTable statuses, int status, boolean safe, boolean sendOnce,
                                             boolean noRetry) {
        if (!sendOnce && statuses.retries(status, safe)) {
            return noRetry ? RetryVerdict.NO_RETRY_SIGNAL : RetryVerdict.RETRYABLE;
        }
        return !safe && statuses.retries(status, true) ? RetryVerdict.NOT_SAFE_TO_REPEAT : RetryVerdict.STATUS_NOT_RETRYABLE;
    }

    /** {@code java.net.http}'s responses. */
    private record JdkTransport(Clock clock) implements HttpTransport<Object> {
        @Override
        public int statusCode(Object response) {
            return ((HttpResponse<?>) response).statusCode();
        }

        @Override
        public Optional<String> header(Object response, String name) {
            return ((HttpResponse<?>) response).headers().firstValue(name);
        }

        @Override
        public void discard(Object response) {
            ResponseBodies.discard(response, clock);
        }
    }

    /** Connect refused or timed out: the request was never sent, so sending it again is always safe. */
    static boolean neverReachedServer(Throwable t) {
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof HttpConnectTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The failure inside async and unchecked wrappers, including a transport's own unchecked
     * wrapper around an I/O failure (Spring's {@code WebClientRequestException}).
     */
    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException || t instanceof UncheckedIOException
                || t instanceof RuntimeException && t.getCause() instanceof IOException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    @Override
    public void onAttemptFinished(RetryEvent.AttemptFinished event) {
        Object previous = lastResult;
        if (previous != null && !lastAccepted && previous != event.result()) {
            // a hedged call: a retried answer that another attempt outlived; nobody will return it
            transport.discard(previous);
        }
        lastResult = event.result();
        lastAccepted = !event.failed();
    }

    @Override
    public void onRetryScheduled(RetryEvent.RetryScheduled event) {
        if (event.result() != null) {
            transport.discard(event.result());
            if (event.result() == lastResult) {
                lastResult = null; // released: not again when the next attempt finishes
            }
        }
        if (listeners.isEmpty()) {
            return;
        }
        int status = event.result() != null ? transport.statusCode(event.result()) : -1;
        HttpRetryEvent e = new HttpRetryEvent(service, operation, event.nextAttempt() - 1, event.maxAttempts(),
                status, event.delay(), requestId, method, uri, event.cause());
        for (HttpRetryListener l : listeners) {
            try {
                l.onRetry(e);
            } catch (RuntimeException ignored) {
                // a listener must not change the call's outcome
            }
        }
    }

    @Override
    public void onCallFinished(RetryEvent.CallFinished event) {
        Object last = lastResult;
        if (!lastAccepted && last != null && event.result() != last) {
            transport.discard(last); // refused, or replaced by a fallback's answer: the caller never sees it
        }
    }
}
