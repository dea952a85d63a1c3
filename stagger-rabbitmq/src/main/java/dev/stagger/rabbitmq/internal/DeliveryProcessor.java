package dev.stagger.rabbitmq.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import dev.stagger.Backoff;
import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.Jitter;
import dev.stagger.RandomSource;
import dev.stagger.RetryScope;
import dev.stagger.internal.Checks;
import dev.stagger.internal.HandlerCall;
import dev.stagger.internal.MessageHeaderNames;
import dev.stagger.internal.RetryStep;
import dev.stagger.rabbitmq.Message;
import dev.stagger.rabbitmq.MessageEvent;
import dev.stagger.rabbitmq.MessageHandler;
import dev.stagger.rabbitmq.MessageHeaders;
import dev.stagger.rabbitmq.MessageListener;
import dev.stagger.rabbitmq.MessageOutcome;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs the handler for one delivery and settles it: acknowledged on success; on failure a copy
 * with the next attempt's headers goes to a delay queue (or the dead-letter queue, as
 * {@link RetryStep} decides), and only once the broker has confirmed the copy is the original
 * acknowledged. A crash between the two leaves both, never neither: at most a duplicate.
 *
 * <p>The handler thread does not wait for the confirm: it publishes and goes on with the next
 * delivery, and the original is acknowledged when the confirm arrives (the broker confirms many
 * publishes at once). A copy that is not confirmed (refused, returned, timed out, its channel
 * closed) or could not be sent at all (its headers exceed the broker's frame size) is never
 * followed by the original's acknowledgement. When its channel closed or the confirm timed out,
 * the original goes back after the wait described below (the message is not at fault); otherwise,
 * in turn: a copy the broker returned because
 * its queue is gone is published again once after the queues are declared again; a retry (or a
 * re-delay) that still fails is dead-lettered as {@code NOT_RETRYABLE} with
 * {@link MessageHeaders#DEAD_CAUSE} {@code UNPUBLISHABLE}; a dead letter that fails goes once
 * more with its history cut to the first and latest entries; and when even that fails, the
 * original is returned to the queue only after a wait from a back-off schedule (100 ms doubling
 * to 30 s, equal jitter, on the consumer's clock) that grows with each consecutive failure and
 * starts over at the next confirmed copy. No failure path returns a message without waiting.
 *
 * <p>A delivery that comes back before its due time (one that outlasted the largest delay level,
 * or a clock that moved) is delayed again for what remains, without running the handler or
 * counting an attempt, unless its due time lies further ahead than the policy allows (past its
 * deadline, or more than the consumer's maximum delay from now): that is dead-lettered with
 * {@code DUE_AT_OUT_OF_RANGE}.
 *
 * <p>A retry whose wait fits the in-place budget (and is at most the {@value #MAX_IN_PLACE}th made
 * in place for the delivery) is not published: its copy's headers are kept in memory, the original
 * stays unacknowledged, and after the wait on the clock (no thread held) the handler runs with
 * those headers as if the copy had come back. Its outcome is settled as any delivery's, against the
 * original's tag. A redelivered message is never retried in place; a closing consumer publishes the
 * waiting ones as their copies ({@link #releaseWaits}); a closed channel drops them (the broker has
 * the originals back). Thread-safe: called on the consumer's handler threads.
 */
public final class DeliveryProcessor {
    /** Room in a frame for the properties other than the headers and for the frame's own fields. */
    static final long OTHER_PROPERTIES_BYTES = 4_096;
    /** Clock skew between consumers allowed beyond a deadline before a due time is out of range. */
    static final long DEADLINE_SKEW_MILLIS = 1_000;
    static final String UNPUBLISHABLE = MessageHeaderNames.UNPUBLISHABLE;
    static final String DUE_AT_OUT_OF_RANGE = MessageHeaderNames.DUE_AT_OUT_OF_RANGE;
    static final String DEFERRED = MessageHeaderNames.DEFERRED;
    /** The most retries of one delivery made in place, whatever the budget. */
    static final int MAX_IN_PLACE = 4;
    /** The wait before a message whose copy could not be published goes back to the queue. */
    static final Backoff GIVE_BACK = Backoff.exponential(Duration.ofMillis(100)).maxDelay(Duration.ofSeconds(30))
            .jitter(Jitter.equal());

    /** Declares the consumer's queues again (on a channel of its own). */
    @FunctionalInterface
    public interface Redeclare {
        void run() throws IOException;
    }

    private final String name;
    private final Topology topology;
    private final Channel channel;
    private final ConfirmingPublisher publisher;
    private final RetryStep step;
    private final MessageHandler handler;
    private final MessageListener[] listeners;
    private final Clock clock;
    private final RandomSource random;
    private final long confirmTimeoutNanos;
    private final long maxDelayMillis;
    private final long maxHeadersBytes;
    private final Redeclare redeclare;
    private final long inPlaceNanos;
    private final Executor settler;
    private final BooleanSupplier closing;
    private final BooleanSupplier forced;
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private final ReentrantLock settling = new ReentrantLock();
    private final Condition settled = settling.newCondition();
    private int unsettled;
    /** In-place retries waiting for their time, each until it runs, is released, or its channel closes. */
    private final Set<InPlace> waiting = new HashSet<>();
    /** Set by {@link #releaseWaits}: an in-place retry decided after it is published as a copy at once. */
    private boolean released;

    /**
     * @param random the randomness of the give-back back-off's jitter
     * @param maxDelay the longest wait a retry may have; a due time further ahead is out of range
     * @param frameMax the connection's negotiated frame size in bytes, 0 for no limit
     * @param redeclare declares the queues again when a copy's queue is gone
     * @param inPlace how long a delivery's retries may wait in place in all (0: never in place)
     * @param settler runs what follows a failed copy (never the connection's own thread)
     * @param closing true once the consumer stops: deliveries not yet started are returned unopened
     * @param forced true once a shutdown timed out and interrupted the handlers still running
     */
    public DeliveryProcessor(String name, Topology topology, Channel channel, ConfirmingPublisher publisher,
                             RetryStep step, MessageHandler handler, MessageListener[] listeners, Clock clock,
                             RandomSource random, Duration confirmTimeout, Duration maxDelay, int frameMax,
                             Redeclare redeclare, Duration inPlace, Executor settler, BooleanSupplier closing,
                             BooleanSupplier forced) {
        this.name = name;
        this.topology = topology;
        this.channel = channel;
        this.publisher = publisher;
        this.step = step;
        this.handler = handler;
        this.listeners = listeners.clone();
        this.clock = clock;
        this.random = random;
        this.confirmTimeoutNanos = confirmTimeout.toNanos();
        this.maxDelayMillis = maxDelay.toMillis();
        this.maxHeadersBytes = frameMax <= 0 ? Long.MAX_VALUE : frameMax - OTHER_PROPERTIES_BYTES;
        this.redeclare = redeclare;
        this.inPlaceNanos = Checks.nanos(inPlace);
        this.settler = settler;
        this.closing = closing;
        this.forced = forced;
        channel.addShutdownListener(cause -> channelClosed());
    }

    /** One delivery being settled: what the listener is told and what is acknowledged. */
    private record Delivery(long tag, AMQP.BasicProperties properties, byte[] body, int attempt, long firstAt,
                            @Nullable Throwable failure, long handlerNanos) {
        /** The handler's failure, for a delivery whose handler failed. */
        Throwable failed() {
            if (failure == null) {
                throw new IllegalStateException("delivery " + tag + " did not fail");
            }
            return failure;
        }
    }

    /**
     * A copy to publish before the original is acknowledged.
     *
     * @param outcome RETRIED or DEAD_LETTERED; null for a delivery delayed again (not an attempt)
     * @param lastResort a dead letter already cut down after a failed copy: when it fails too, the original waits and goes back
     */
    private record Copy(String queue, Map<String, Object> headers, @Nullable MessageOutcome outcome, Duration delay,
                        @Nullable EndReason reason, boolean lastResort) {
    }

    /**
     * A delivery as the handler is to see it: the broker's own, or a retry of it made in place,
     * whose properties carry the headers its copy would have carried (attempt, history, due time).
     *
     * @param inPlace the retries of this delivery made in place so far (0: the broker's delivery as it came)
     * @param waitedNanos what those retries waited, in all
     */
    private record Received(long tag, boolean redelivered, AMQP.BasicProperties properties, byte[] body, int inPlace,
                            long waitedNanos) {
    }

    /** An in-place retry waiting for its time; whoever takes it from {@link #waiting} first deals with it. */
    private static final class InPlace {
        final Received received;
        volatile Clock.@Nullable Cancellable timer;

        InPlace(Received received) {
            this.received = received;
        }
    }

    public void process(Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
        handle(new Received(envelope.getDeliveryTag(), envelope.isRedeliver(), properties, body, 0, 0));
    }

    private void handle(Received r) {
        long tag = r.tag();
        AMQP.BasicProperties properties = r.properties();
        byte[] body = r.body();
        Map<String, Object> headers = properties.getHeaders();
        int attempt = HeaderCodec.attempt(headers);
        if (closing.getAsBoolean()) {
            // the consumer stops: the broker takes the message back for another consumer, once
            tell(properties, attempt, MessageOutcome.RETURNED, 0, -1, Duration.ZERO, null, null);
            giveBack(r);
            return;
        }
        long now = clock.currentTimeMillis();
        long dueAt = HeaderCodec.number(headers, MessageHeaders.DUE_AT, 0);
        if (dueAt > now) {
            long firstAt = HeaderCodec.number(headers, MessageHeaders.FIRST_ATTEMPT_AT, -1);
            Delivery d = new Delivery(tag, properties, body, attempt, firstAt, null, 0);
            Copy outOfRange = dueAtOutOfRange(headers, firstAt, dueAt, now);
            long leftNanos = nanosOfMillis(dueAt - now);
            if (outOfRange != null) {
                start(d, outOfRange);
            } else if (r.inPlace() > 0 && fitsInPlace(r, leftNanos)) {
                // an in-place retry whose time has not come on the wall clock: waits what remains, not an attempt
                waitInPlace(new Received(tag, false, properties, body, r.inPlace(), r.waitedNanos() + leftNanos), leftNanos);
            } else {
                Map<String, Object> copy = HeaderCodec.copyForRepublish(headers);
                start(d, new Copy(topology.delayQueue(topology.levelFor(dueAt - now)), copy, null, Duration.ZERO, null,
                        false));
            }
            return;
        }
        long firstAt = HeaderCodec.number(headers, MessageHeaders.FIRST_ATTEMPT_AT, now);
        Message message = new Message(topology.queue(), body, properties, r.redelivered(), attempt,
                Instant.ofEpochMilli(firstAt), HeaderCodec.history(headers));
        HandlerCall call = HandlerCall.run(clock, listeners, message, MessageListener::onHandling,
                () -> handler.handle(message));
        Throwable failure = call.failure();
        long handlerNanos = call.nanos();
        if (failure == null) {
            tell(properties, attempt, MessageOutcome.SUCCEEDED, handlerNanos, firstAt, Duration.ZERO, null, null);
            ack(tag);
            return;
        }
        if (forced.getAsBoolean() || failure instanceof InterruptedException && closing.getAsBoolean()) {
            // stopped by the shutdown, not the message's fault: give it back without counting the attempt
            tell(properties, attempt, MessageOutcome.RETURNED, handlerNanos, firstAt, Duration.ZERO, null, failure);
            giveBack(r);
            return;
        }
        Delivery d = new Delivery(tag, properties, body, attempt, firstAt, failure, handlerNanos);
        Optional<RetryScope.Outcome> inner = step.defers() ? call.decidedOn() : Optional.empty();
        Copy copy = inner.isPresent() ? deferred(d, inner.get()) : copyAfterFailure(d);
        if (copy.outcome() == MessageOutcome.RETRIED && r.inPlace() < MAX_IN_PLACE) {
            // the wait the engine chose, in whole milliseconds as the copy's due time has it
            long waitNanos = nanosOfMillis(HeaderCodec.number(copy.headers(), MessageHeaders.DUE_AT, now) - now);
            if (fitsInPlace(r, waitNanos)) {
                tell(properties, attempt, MessageOutcome.RETRIED, handlerNanos, firstAt, copy.delay(), null, failure);
                waitInPlace(new Received(tag, false, properties.builder().headers(copy.headers()).build(), body,
                        r.inPlace() + 1, r.waitedNanos() + waitNanos), waitNanos);
                return;
            }
        }
        start(d, copy);
    }

    /**
     * Whether {@code r} may wait {@code waitNanos} more in place: not while closing, never for a
     * redelivered message (it may have been retried in place before a crash: from here on its
     * attempts are counted in copies only), and only within the in-place budget.
     */
    private boolean fitsInPlace(Received r, long waitNanos) {
        return !r.redelivered() && !closing.getAsBoolean() && waitNanos <= inPlaceNanos - r.waitedNanos();
    }

    private static long nanosOfMillis(long millis) {
        return millis > Long.MAX_VALUE / 1_000_000 ? Long.MAX_VALUE : Math.max(0, millis) * 1_000_000;
    }

    /**
     * Waits {@code nanos} on the clock (holding no thread; the original stays unacknowledged, in
     * its prefetch slot), then runs {@code next} on a handler thread. After {@link #releaseWaits}
     * publishes its copy at once instead.
     */
    private void waitInPlace(Received next, long nanos) {
        InPlace w = new InPlace(next);
        boolean now;
        settling.lock();
        try {
            now = released;
            if (!now) {
                waiting.add(w);
            }
        } finally {
            settling.unlock();
        }
        if (now) {
            publishInstead(next);
            return;
        }
        w.timer = clock.schedule(() -> {
            try {
                settler.execute(() -> {
                    if (take(w)) {
                        handle(w.received);
                    }
                });
            } catch (RejectedExecutionException stopping) {
                // the consumer is closing: releaseWaits publishes its copy
            }
        }, nanos);
    }

    private boolean take(InPlace w) {
        settling.lock();
        try {
            return waiting.remove(w);
        } finally {
            settling.unlock();
        }
    }

    /** Takes every waiting in-place retry. */
    private List<InPlace> takeAll() {
        List<InPlace> all = new ArrayList<>(waiting);
        waiting.clear();
        for (InPlace w : all) {
            Clock.Cancellable timer = w.timer;
            if (timer != null) {
                timer.cancel();
            }
        }
        return all;
    }

    /**
     * For a closing consumer: each in-place retry still waiting (and any decided from now on) is
     * published as the copy it stands for (to the delay queue for what remains of its wait, or the
     * work queue), its original acknowledged on the confirm as for any copy; its attempt count and
     * history travel in the copy.
     */
    public void releaseWaits() {
        List<InPlace> all;
        settling.lock();
        try {
            released = true;
            all = takeAll();
        } finally {
            settling.unlock();
        }
        for (InPlace w : all) {
            publishInstead(w.received);
        }
    }

    /** The consume channel closed: the broker has taken back the originals of the waiting in-place retries. */
    private void channelClosed() {
        settling.lock();
        try {
            takeAll();
        } finally {
            settling.unlock();
        }
    }

    /** Returns {@code r} to the queue: the broker's delivery as it is, an in-place retry as the copy it stands for. */
    private void giveBack(Received r) {
        if (r.inPlace() > 0) {
            publishInstead(r);
        } else {
            giveBack(r.tag());
        }
    }

    /** Publishes an in-place retry as the copy it stands for, and acknowledges the original on the confirm. */
    private void publishInstead(Received r) {
        Map<String, Object> headers = r.properties().getHeaders();
        long now = clock.currentTimeMillis();
        long dueAt = HeaderCodec.number(headers, MessageHeaders.DUE_AT, 0);
        String target = dueAt > now ? topology.delayQueue(topology.levelFor(dueAt - now)) : topology.queue();
        start(new Delivery(r.tag(), r.properties(), r.body(), HeaderCodec.attempt(headers),
                HeaderCodec.number(headers, MessageHeaders.FIRST_ATTEMPT_AT, -1), null, 0),
                new Copy(target, HeaderCodec.copyForRepublish(headers), null, Duration.ZERO, null, false));
    }

    /** The dead letter for a failure a retry inside the handler already decided on: one layer retries a failure. */
    private Copy deferred(Delivery d, RetryScope.Outcome inner) {
        Map<String, Object> old = d.properties().getHeaders();
        Map<String, Object> headers = HeaderCodec.copyForRepublish(old);
        HeaderCodec.appendError(old, headers, d.attempt(), clock.currentTimeMillis(), d.failed());
        headers.put(MessageHeaders.FIRST_ATTEMPT_AT, d.firstAt());
        return dead(headers, d.attempt(), EndReason.NOT_RETRYABLE, DEFERRED + ": retry '" + inner.retry() + "' inside the handler "
                + "decided on the failure (" + inner.reason() + " after " + inner.attempts() + " attempt(s))", false);
    }

    private Copy copyAfterFailure(Delivery d) {
        Map<String, Object> old = d.properties().getHeaders();
        long backoffState = HeaderCodec.number(old, MessageHeaders.BACKOFF_STATE, 0);
        long now = clock.currentTimeMillis();
        RetryStep.Outcome outcome = step.afterFailure(d.failed(),
                new RetryStep.Attempt(d.attempt(), d.firstAt(), backoffState));
        Map<String, Object> headers = HeaderCodec.copyForRepublish(old);
        HeaderCodec.appendError(old, headers, d.attempt(), now, d.failed());
        headers.put(MessageHeaders.FIRST_ATTEMPT_AT, d.firstAt());
        if (outcome instanceof RetryStep.Retry retry) {
            long delayMillis = (retry.delayNanos() + 999_999) / 1_000_000;
            if (delayMillis > maxDelayMillis) {
                return dead(headers, d.attempt(), EndReason.NOT_RETRYABLE, DUE_AT_OUT_OF_RANGE + ": the retry's wait of "
                        + delayMillis + " ms is longer than the consumer's maxDelay of " + maxDelayMillis + " ms", false);
            }
            headers.put(MessageHeaders.ATTEMPT, d.attempt() + 1);
            headers.put(MessageHeaders.BACKOFF_STATE, retry.backoffState());
            headers.put(MessageHeaders.DUE_AT, now + delayMillis);
            String target = delayMillis == 0 ? topology.queue() : topology.delayQueue(topology.levelFor(delayMillis));
            return new Copy(target, headers, MessageOutcome.RETRIED, Duration.ofNanos(retry.delayNanos()), null, false);
        }
        return dead(headers, d.attempt(), ((RetryStep.DeadLetter) outcome).reason(), null, false);
    }

    /** {@code headers} made a dead letter's, for {@code reason} (and {@code cause}, when the consumer's own). */
    private Copy dead(Map<String, Object> headers, int attempt, EndReason reason, @Nullable String cause,
                      boolean lastResort) {
        headers.put(MessageHeaders.ATTEMPT, attempt);
        headers.put(MessageHeaders.END_REASON, reason.name());
        headers.put(MessageHeaders.DEAD_AT, clock.currentTimeMillis());
        headers.remove(MessageHeaders.DUE_AT);
        if (cause != null) {
            headers.put(MessageHeaders.DEAD_CAUSE, cause);
        }
        return new Copy(topology.deadQueue(), headers, MessageOutcome.DEAD_LETTERED, Duration.ZERO, reason, lastResort);
    }

    /**
     * The dead letter for a delivery whose due time cannot be right: after the policy's deadline
     * (plus a little clock skew), or further ahead than the longest wait a retry may have; null
     * when it is in range.
     */
    private @Nullable Copy dueAtOutOfRange(Map<String, Object> headers, long firstAt, long dueAt, long now) {
        Optional<Duration> deadline = step.deadline();
        String cause = null;
        EndReason reason = EndReason.NOT_RETRYABLE;
        if (deadline.isPresent() && firstAt >= 0
                && dueAt > firstAt + deadline.get().toMillis() + DEADLINE_SKEW_MILLIS) {
            reason = EndReason.DEADLINE;
            cause = DUE_AT_OUT_OF_RANGE + ": due at " + Instant.ofEpochMilli(dueAt) + ", after the policy's deadline of "
                    + deadline.get() + " from the first attempt at " + Instant.ofEpochMilli(firstAt);
        } else if (dueAt - now > maxDelayMillis) {
            cause = DUE_AT_OUT_OF_RANGE + ": due at " + Instant.ofEpochMilli(dueAt) + ", " + (dueAt - now)
                    + " ms ahead, more than the consumer's maxDelay of " + maxDelayMillis + " ms";
        }
        if (cause == null) {
            return null;
        }
        return dead(HeaderCodec.copyForRepublish(headers), HeaderCodec.attempt(headers), reason, cause, false);
    }

    private void start(Delivery d, Copy copy) {
        begin();
        settle(d, copy, false);
    }

    /**
     * Publishes {@code copy} and acknowledges the original once the broker confirms it; when it
     * does not, goes on as {@link #failed} says.
     *
     * @param redeclared whether the queues were declared again for this delivery already
     */
    private void settle(Delivery d, Copy copy, boolean redeclared) {
        long bytes = HeaderCodec.headersBytes(copy.headers());
        if (bytes > maxHeadersBytes) {
            failed(d, copy, new IOException("its headers take " + bytes + " bytes, more than the broker's frame size allows ("
                    + (maxHeadersBytes + OTHER_PROPERTIES_BYTES) + " bytes in all)"), redeclared);
            return;
        }
        CompletableFuture<Void> confirmed = publisher.publish(copy.queue(),
                d.properties().builder().headers(copy.headers()).build(), d.body());
        if (!confirmed.isDone()) {
            Clock.Cancellable timeout = clock.schedule(() -> confirmed.completeExceptionally(
                    new TimeoutException("the broker did not confirm within " + Duration.ofNanos(confirmTimeoutNanos))),
                    confirmTimeoutNanos);
            confirmed.whenComplete((ok, e) -> timeout.cancel());
        }
        confirmed.whenComplete((ok, e) -> {
            if (e == null) {
                // on the connection's thread when the confirm arrives: only an ack and the listeners
                consecutiveFailures.set(0);
                if (copy.outcome() != null) {
                    tell(d.properties(), d.attempt(), copy.outcome(), d.handlerNanos(), d.firstAt(), copy.delay(),
                            copy.reason(), d.failure());
                }
                ack(d.tag());
                end();
            } else {
                Throwable why = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                try {
                    settler.execute(() -> failed(d, copy, why, redeclared));
                } catch (RejectedExecutionException stopping) {
                    end(); // the consumer is closing: the original goes back to the queue with its channel
                }
            }
        });
    }

    /** What follows a copy that was not confirmed ({@code why}); never on the connection's thread. */
    private void failed(Delivery d, Copy copy, Throwable why, boolean redeclared) {
        if (!redeclared && why instanceof ConfirmingPublisher.Unroutable) {
            try {
                redeclare.run(); // a queue deleted under us: declared again, the copy goes once more
            } catch (IOException | RuntimeException e) {
                why.addSuppressed(e);
            }
            settle(d, copy, true);
            return;
        }
        if (channelDown(why)) {
            // not the message's fault: no dead letter for it; it comes back with the channel, or after the wait
            backOff(d, why);
            return;
        }
        if (!copy.lastResort()) {
            Map<String, Object> headers = new HashMap<>(copy.headers());
            HeaderCodec.shrinkHistory(headers);
            headers.remove(MessageHeaders.BACKOFF_STATE);
            String what = copy.outcome() == MessageOutcome.DEAD_LETTERED ? "the dead letter" : "the retry";
            String cause = UNPUBLISHABLE + ": " + what + " could not be published: " + describe(why);
            EndReason reason = copy.outcome() == MessageOutcome.DEAD_LETTERED && copy.reason() != null ? copy.reason()
                    : EndReason.NOT_RETRYABLE; // a dead letter always has its reason
            settle(d, dead(headers, d.attempt(), reason, cause, true), redeclared);
            return;
        }
        backOff(d, why);
    }

    /** Returns the original to the queue after a wait that grows with each consecutive failure. */
    private void backOff(Delivery d, Throwable why) {
        int failures = consecutiveFailures.incrementAndGet();
        long waitNanos = Math.max(1, GIVE_BACK.start(random).nextDelayNanos(Math.min(failures, 1_000)));
        clock.schedule(() -> giveBack(d.tag()), waitNanos); // before the listeners hear of the wait: it is set
        tell(d.properties(), d.attempt(), MessageOutcome.RETURNED, d.handlerNanos(), d.firstAt(),
                Duration.ofNanos(waitNanos), null, d.failure() != null ? d.failure() : why);
        end(); // the wait holds no thread; a close returns the message with its channel
    }

    /** Whether the copy failed because its channel closed or the confirm never came, rather than for the copy itself. */
    private static boolean channelDown(Throwable why) {
        return why instanceof ShutdownSignalException || why.getCause() instanceof ShutdownSignalException
                || why instanceof TimeoutException;
    }

    private static String describe(Throwable t) {
        String m = t.getMessage();
        String text = t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
        return text.length() <= 300 ? text : text.substring(0, 297) + "...";
    }

    private void begin() {
        settling.lock();
        try {
            unsettled++;
        } finally {
            settling.unlock();
        }
    }

    private void end() {
        settling.lock();
        try {
            if (--unsettled == 0) {
                settled.signalAll();
            }
        } finally {
            settling.unlock();
        }
    }

    /**
     * Waits until every copy published so far is confirmed (and its original acknowledged) or has
     * failed, at most {@code timeout}.
     *
     * @return true when none is left
     */
    public boolean awaitSettled(Duration timeout) throws InterruptedException {
        long left = timeout.toNanos();
        settling.lock();
        try {
            while (unsettled > 0) {
                if (left <= 0) {
                    return false;
                }
                left = settled.awaitNanos(left);
            }
            return true;
        } finally {
            settling.unlock();
        }
    }

    private void ack(long tag) {
        try {
            channel.basicAck(tag, false);
        } catch (IOException | RuntimeException closed) {
            // the channel closed: the broker delivers the message again (at least once)
        }
    }

    private void giveBack(long tag) {
        try {
            channel.basicReject(tag, true);
        } catch (IOException | RuntimeException closed) {
            // the channel closed: the broker has returned the message already
        }
    }

    private void tell(AMQP.BasicProperties properties, int attempt, MessageOutcome outcome, long handlerNanos,
                      long firstAtMillis, Duration delay, @Nullable EndReason reason, @Nullable Throwable failure) {
        if (listeners.length == 0) {
            return;
        }
        long elapsedMillis = firstAtMillis < 0 ? 0 : clock.currentTimeMillis() - firstAtMillis;
        MessageEvent event = new MessageEvent(name, topology.queue(), properties.getMessageId(), attempt,
                step.maxAttempts(), outcome, Duration.ofNanos(handlerNanos), Duration.ofMillis(Math.max(0, elapsedMillis)),
                delay, reason, failure);
        for (MessageListener l : listeners) {
            try {
                l.onMessage(event);
            } catch (RuntimeException ignored) {
                // listeners must not change what becomes of the message
            }
        }
    }
}
