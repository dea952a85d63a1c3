package dev.stagger.grpc.internal;

import dev.stagger.AttemptContext;
import dev.stagger.Retry;
import dev.stagger.RetryRefusedException;
import dev.stagger.http.StaggerHeaders;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * One call as the application sees it, made of attempts the core {@link Retry} runs: each attempt
 * is a new call on the next channel, sent the buffered request message again with its own deadline
 * and attempt metadata. Unary calls hold the response until the attempt's status decides it; a
 * server-streaming call is committed by its first response message (from then on its events go
 * straight to the application and it is never retried). The application's listener hears exactly
 * one {@code onClose}.
 */
public final class RetryingCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {
    /** gRFC A6: the number of attempts sent before this one, on every retry and hedge. */
    public static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> ATTEMPT =
            Metadata.Key.of(StaggerHeaders.ATTEMPT, Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> DEADLINE =
            Metadata.Key.of(StaggerHeaders.DEADLINE, Metadata.ASCII_STRING_MARSHALLER);
    /** The outcome of an attempt that committed a stream: accepted, and already handed over. */
    private static final Object COMMITTED = new Object();

    private final Retry retry;
    private final MethodDescriptor<ReqT, RespT> method;
    private final CallOptions callOptions;
    private final Channel next;
    private final Context context;
    private final boolean commitOnFirstMessage;
    /** Where the application's listener is called: the call options' executor, in order; null: the calling thread. */
    private final @Nullable Executor delivery;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicBoolean closed = new AtomicBoolean();

    // guarded by lock
    private @Nullable Listener<RespT> listener;
    private @Nullable Metadata headers;
    private @Nullable ReqT message;
    private int requested;
    private boolean compressed;
    private boolean cancelled;
    private @Nullable Attempt committed;
    private final List<Attempt> running = new ArrayList<>(2);
    private @Nullable CompletableFuture<Object> outcome;

    public RetryingCall(Retry retry, MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next,
                        Context context, boolean commitOnFirstMessage) {
        this.retry = retry;
        this.method = method;
        this.callOptions = callOptions;
        this.next = next;
        this.context = context;
        this.commitOnFirstMessage = commitOnFirstMessage;
        Executor executor = callOptions.getExecutor();
        this.delivery = executor == null ? null : new SerialExecutor(executor);
    }

    @Override
    public void start(Listener<RespT> responseListener, Metadata metadata) {
        lock.lock();
        try {
            if (listener != null) {
                throw new IllegalStateException("call already started");
            }
            listener = responseListener;
            headers = metadata;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void request(int numMessages) {
        if (numMessages < 0) {
            throw new IllegalArgumentException("numMessages must be non-negative, got " + numMessages);
        }
        List<Attempt> to;
        lock.lock();
        try {
            requested = requested + numMessages < 0 ? Integer.MAX_VALUE : requested + numMessages;
            to = committed != null ? List.of(committed) : List.copyOf(running);
        } finally {
            lock.unlock();
        }
        for (Attempt a : to) {
            a.call.request(numMessages);
        }
    }

    @Override
    public void sendMessage(ReqT requestMessage) {
        lock.lock();
        try {
            if (message != null) {
                throw new IllegalStateException("a " + method.getType() + " call sends one request message");
            }
            message = requestMessage;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setMessageCompression(boolean enabled) {
        lock.lock();
        try {
            compressed = enabled;
        } finally {
            lock.unlock();
        }
    }

    /** The request is complete: the attempts begin, on this thread (so a retry around this call is seen). */
    @Override
    public void halfClose() {
        CompletableFuture<Object> started;
        lock.lock();
        try {
            if (listener == null || message == null || outcome != null || cancelled) {
                if (cancelled) {
                    return;
                }
                throw new IllegalStateException("halfClose before start and sendMessage, or twice");
            }
        } finally {
            lock.unlock();
        }
        started = retry.callAsync(this::attempt);
        lock.lock();
        boolean cancelNow;
        try {
            outcome = started;
            cancelNow = cancelled;
        } finally {
            lock.unlock();
        }
        if (cancelNow) {
            started.cancel(false);
        }
        started.handle((value, failure) -> {
            finish(value, failure);
            return null;
        });
    }

    @Override
    public void cancel(@Nullable String reason, @Nullable Throwable cause) {
        Attempt streaming;
        CompletableFuture<Object> pending;
        lock.lock();
        try {
            if (cancelled) {
                return;
            }
            cancelled = true;
            streaming = committed;
            pending = outcome;
        } finally {
            lock.unlock();
        }
        if (streaming != null) {
            streaming.call.cancel(reason, cause); // its onClose(CANCELLED) reaches the application
            return;
        }
        Status status = Status.CANCELLED.withDescription(reason != null ? reason : "cancelled by the caller");
        close(cause != null ? status.withCause(cause) : status, new Metadata());
        if (pending != null) {
            pending.cancel(false); // stops the retry and cancels the attempt in flight
        }
    }

    /** Ready while the request is buffered; once a stream is committed, as its attempt is. */
    @Override
    public boolean isReady() {
        Attempt c = committed();
        return c == null || c.call.isReady();
    }

    @Override
    public Attributes getAttributes() {
        Attempt c = committed();
        return c == null ? Attributes.EMPTY : c.call.getAttributes();
    }

    private @Nullable Attempt committed() {
        lock.lock();
        try {
            return committed;
        } finally {
            lock.unlock();
        }
    }

    /** One attempt, as the retry's operation: a new call on the next channel, the request sent again. */
    private CompletableFuture<Object> attempt(AttemptContext attempt) {
        ClientCall<ReqT, RespT> call;
        Context previous = context.attach();
        try {
            call = next.newCall(method, optionsFor(attempt));
        } finally {
            context.detach(previous);
        }
        Attempt a = new Attempt(call);
        ReqT request;
        Metadata sent;
        int toRequest;
        boolean compress;
        lock.lock();
        try {
            if (cancelled) {
                a.cancel(false);
                return a;
            }
            running.add(a);
            request = message;
            sent = headersFor(attempt, headers);
            toRequest = requested;
            compress = compressed;
        } finally {
            lock.unlock();
        }
        previous = context.attach();
        try {
            call.start(a.listener, sent);
            if (compress) {
                call.setMessageCompression(true);
            }
            if (toRequest > 0) {
                call.request(toRequest);
            }
            call.sendMessage(request);
            call.halfClose();
        } catch (RuntimeException e) {
            call.cancel("failed to send the attempt", e);
            throw e;
        } finally {
            context.detach(previous);
        }
        return a;
    }

    /** The call's options for one attempt: the deadline shortened to the attempt's time ({@link AttemptContext#attemptTimeout()}). */
    private CallOptions optionsFor(AttemptContext attempt) {
        Optional<Duration> timeout = attempt.attemptTimeout();
        if (timeout.isEmpty()) {
            return callOptions;
        }
        long nanos;
        try {
            nanos = Math.max(0, timeout.get().toNanos());
        } catch (ArithmeticException e) {
            nanos = Long.MAX_VALUE;
        }
        Deadline bound = Deadline.after(nanos, TimeUnit.NANOSECONDS);
        Deadline own = callOptions.getDeadline();
        return own != null && own.isBefore(bound) ? callOptions : callOptions.withDeadline(bound);
    }

    /**
     * The application's metadata plus the attempt's: {@code grpc-previous-rpc-attempts} on retries
     * and hedges (gRFC A6), and Stagger's attempt and deadline headers ({@link StaggerHeaders#forAttempt}).
     */
    private static Metadata headersFor(AttemptContext attempt, @Nullable Metadata application) {
        Metadata sent = new Metadata();
        if (application != null) {
            sent.merge(application);
        }
        sent.discardAll(PREVIOUS_ATTEMPTS);
        if (attempt.attempt() > 1) {
            sent.put(PREVIOUS_ATTEMPTS, Integer.toString(attempt.attempt() - 1));
        }
        StaggerHeaders.forAttempt(attempt, (name, value) -> {
            Metadata.Key<String> key = name.equals(StaggerHeaders.ATTEMPT) ? ATTEMPT
                    : name.equals(StaggerHeaders.DEADLINE) ? DEADLINE
                    : Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
            sent.discardAll(key);
            sent.put(key, value);
        });
        return sent;
    }

    /** The retry ended: hand its outcome to the application (a committed stream already has it). */
    private void finish(@Nullable Object value, @Nullable Throwable failure) {
        if (value == COMMITTED) {
            return;
        }
        if (failure == null && value instanceof Response<?> r) {
            @SuppressWarnings("unchecked")
            Response<RespT> response = (Response<RespT>) r;
            if (closed.compareAndSet(false, true)) {
                deliver(l -> {
                    if (response.headers != null) {
                        l.onHeaders(response.headers);
                    }
                    for (RespT m : response.messages) {
                        l.onMessage(m);
                    }
                    l.onClose(Status.OK, response.trailers);
                });
            }
            return;
        }
        Throwable t = GrpcClassifier.unwrap(failure != null ? failure : new IllegalStateException("no outcome"));
        if (t instanceof CancellationException) {
            close(Status.CANCELLED.withDescription("call cancelled").withCause(t), new Metadata());
            return;
        }
        Throwable last = t instanceof RetryRefusedException ? t.getCause() : t;
        Status status = last != null ? Status.fromThrowable(last) : Status.UNAVAILABLE;
        if (t instanceof RetryRefusedException) {
            // refused by the breaker, the budget or the throttle: the last attempt's code (UNAVAILABLE
            // when none was made), saying why; the refusal (with the last failure) as the cause
            Status.Code code = last != null && status.getCode() != Status.Code.UNKNOWN ? status.getCode()
                    : Status.Code.UNAVAILABLE;
            status = code.toStatus().withDescription(t.getMessage());
        }
        Metadata trailers = last != null ? Status.trailersFromThrowable(last) : null;
        close(status.withCause(t), trailers != null ? trailers : new Metadata());
    }

    /** Delivers the application's one {@code onClose}. */
    private void close(Status status, Metadata trailers) {
        if (closed.compareAndSet(false, true)) {
            deliver(l -> l.onClose(status, trailers));
        }
    }

    private void deliver(java.util.function.Consumer<Listener<RespT>> event) {
        Listener<RespT> l;
        lock.lock();
        try {
            l = listener;
        } finally {
            lock.unlock();
        }
        if (l == null) {
            return;
        }
        Executor d = delivery;
        if (d == null) {
            event.accept(l);
        } else {
            d.execute(() -> event.accept(l));
        }
    }

    /** What an attempt that ended OK returns to the engine. */
    private record Response<T>(@Nullable Metadata headers, List<T> messages, Metadata trailers) {
    }

    /**
     * One attempt: its call, its listener, and the future the engine waits on (cancelling it, as
     * the engine does for a hedge's loser or a cancelled call, cancels the call).
     */
    private final class Attempt extends CompletableFuture<Object> {
        final ClientCall<ReqT, RespT> call;
        final Listener<RespT> listener = new AttemptListener();
        // used by the attempt's listener thread only
        @Nullable Metadata responseHeaders;
        final List<RespT> messages = new ArrayList<>(1);
        /** Set once this attempt's stream is handed to the application. */
        volatile boolean streaming;

        Attempt(ClientCall<ReqT, RespT> call) {
            this.call = call;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean done = super.cancel(mayInterruptIfRunning);
            if (done) {
                call.cancel("attempt cancelled by the retry", null);
            }
            return done;
        }

        private void ended() {
            lock.lock();
            try {
                running.remove(this);
            } finally {
                lock.unlock();
            }
        }

        /** A server-streaming attempt's first message: the call is committed to this attempt, if still open. */
        private boolean commit() {
            lock.lock();
            try {
                if (cancelled || committed != null || isDone()) {
                    return false;
                }
                committed = this;
                streaming = true;
            } finally {
                lock.unlock();
            }
            return true;
        }

        private final class AttemptListener extends Listener<RespT> {
            @Override
            public void onHeaders(Metadata h) {
                if (streaming) {
                    deliver(l -> l.onHeaders(h));
                } else {
                    responseHeaders = h;
                }
            }

            @Override
            public void onMessage(RespT m) {
                if (streaming) {
                    deliver(l -> l.onMessage(m));
                    return;
                }
                if (commitOnFirstMessage) {
                    if (commit()) {
                        Metadata h = responseHeaders;
                        deliver(l -> {
                            if (h != null) {
                                l.onHeaders(h);
                            }
                            l.onMessage(m);
                        });
                        complete(COMMITTED);
                    }
                    return;
                }
                messages.add(m);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                ended();
                if (streaming) {
                    if (closed.compareAndSet(false, true)) {
                        deliver(l -> l.onClose(status, trailers));
                    }
                    return;
                }
                if (status.isOk()) {
                    complete(new Response<>(responseHeaders, List.copyOf(messages), trailers));
                } else {
                    completeExceptionally(status.asRuntimeException(trailers));
                }
            }

            @Override
            public void onReady() {
                if (streaming) {
                    deliver(Listener::onReady);
                }
            }
        }
    }
}
