package dev.stagger.rabbitmq.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Envelope;
import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.rabbitmq.Message;
import dev.stagger.rabbitmq.MessageEvent;
import dev.stagger.rabbitmq.MessageHandler;
import dev.stagger.rabbitmq.MessageHeaders;
import dev.stagger.rabbitmq.MessageListener;
import dev.stagger.rabbitmq.MessageOutcome;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Runs the handler for one delivery and settles it: acknowledged on success; on failure a copy
 * with the next attempt's headers goes to a delay queue (or the dead-letter queue, as
 * {@link RetryStep} decides), and only once the broker has confirmed the copy is the original
 * acknowledged. A crash between the two leaves both, never neither: at most a duplicate. When the
 * copy is not confirmed, the original is returned to the broker (rejected with requeue) and its
 * attempt runs again.
 *
 * <p>A delivery that comes back before its due time (one that outlasted the largest delay level,
 * or a clock that moved) is delayed again for what remains, without running the handler or
 * counting an attempt. Thread-safe: called on the consumer's handler threads.
 */
public final class DeliveryProcessor {
    private final String name;
    private final Topology topology;
    private final Channel channel;
    private final ConfirmingPublisher publisher;
    private final RetryStep step;
    private final MessageHandler handler;
    private final MessageListener[] listeners;
    private final Clock clock;
    private final long confirmTimeoutNanos;
    private final BooleanSupplier closing;
    private final BooleanSupplier forced;

    /**
     * @param closing true once the consumer stops: deliveries not yet started are returned unopened
     * @param forced true once a shutdown timed out and interrupted the handlers still running
     */
    public DeliveryProcessor(String name, Topology topology, Channel channel, ConfirmingPublisher publisher,
                             RetryStep step, MessageHandler handler, MessageListener[] listeners, Clock clock,
                             Duration confirmTimeout, BooleanSupplier closing,
                             BooleanSupplier forced) {
        this.name = name;
        this.topology = topology;
        this.channel = channel;
        this.publisher = publisher;
        this.step = step;
        this.handler = handler;
        this.listeners = listeners.clone();
        this.clock = clock;
        this.confirmTimeoutNanos = confirmTimeout.toNanos();
        this.closing = closing;
        this.forced = forced;
    }

    public void process(Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
        long tag = envelope.getDeliveryTag();
        Map<String, Object> headers = properties.getHeaders();
        int attempt = HeaderCodec.attempt(headers);
        if (closing.getAsBoolean()) {
            tell(properties, attempt, MessageOutcome.RETURNED, 0, -1, Duration.ZERO, null, null);
            giveBack(tag);
            return;
        }
        long now = clock.currentTimeMillis();
        long dueAt = HeaderCodec.number(headers, MessageHeaders.DUE_AT, 0);
        if (dueAt > now) {
            delayAgain(tag, properties, body, dueAt - now);
            return;
        }
        long firstAt = HeaderCodec.number(headers, MessageHeaders.FIRST_ATTEMPT_AT, now);
        Message message = new Message(topology.queue(), body, properties, envelope.isRedeliver(), attempt,
                Instant.ofEpochMilli(firstAt), HeaderCodec.history(headers));
        long started = clock.nanoTime();
        Throwable failure = null;
        try {
            handler.handle(message);
        } catch (Throwable t) {
            failure = t;
        }
        long handlerNanos = Math.max(0, clock.nanoTime() - started);
        if (failure == null) {
            tell(properties, attempt, MessageOutcome.SUCCEEDED, handlerNanos, firstAt, Duration.ZERO, null, null);
            ack(tag);
            return;
        }
        if (forced.getAsBoolean() || failure instanceof InterruptedException && closing.getAsBoolean()) {
            // stopped by the shutdown, not the message's fault: give it back without counting the attempt
            tell(properties, attempt, MessageOutcome.RETURNED, handlerNanos, firstAt, Duration.ZERO, null, failure);
            giveBack(tag);
            return;
        }
        settleFailure(tag, properties, body, attempt, firstAt, failure, handlerNanos);
    }

    private void settleFailure(long tag, AMQP.BasicProperties properties, byte[] body, int attempt, long firstAt,
                               Throwable failure, long handlerNanos) {
        Map<String, Object> old = properties.getHeaders();
        long backoffState = HeaderCodec.number(old, MessageHeaders.BACKOFF_STATE, 0);
        long now = clock.currentTimeMillis();
        RetryStep.Outcome outcome = step.afterFailure(failure, new RetryStep.Attempt(attempt, firstAt, backoffState));
        Map<String, Object> headers = HeaderCodec.copyForRepublish(old);
        headers.put(MessageHeaders.ERRORS, HeaderCodec.appendError(old, attempt, now, failure));
        headers.put(MessageHeaders.FIRST_ATTEMPT_AT, firstAt);
        String target;
        Duration delay = Duration.ZERO;
        EndReason reason = null;
        if (outcome instanceof RetryStep.Retry retry) {
            long delayMillis = (retry.delayNanos() + 999_999) / 1_000_000;
            delay = Duration.ofNanos(retry.delayNanos());
            headers.put(MessageHeaders.ATTEMPT, attempt + 1);
            headers.put(MessageHeaders.BACKOFF_STATE, retry.backoffState());
            headers.put(MessageHeaders.DUE_AT, now + delayMillis);
            target = delayMillis == 0 ? topology.queue() : topology.delayQueue(topology.levelFor(delayMillis));
        } else {
            reason = ((RetryStep.DeadLetter) outcome).reason();
            headers.put(MessageHeaders.ATTEMPT, attempt);
            headers.put(MessageHeaders.END_REASON, reason.name());
            headers.put(MessageHeaders.DEAD_AT, now);
            headers.remove(MessageHeaders.DUE_AT);
            target = topology.deadQueue();
        }
        if (republish(target, properties, headers, body)) {
            tell(properties, attempt, reason == null ? MessageOutcome.RETRIED : MessageOutcome.DEAD_LETTERED,
                    handlerNanos, firstAt, delay, reason, failure);
            ack(tag);
        } else {
            tell(properties, attempt, MessageOutcome.RETURNED, handlerNanos, firstAt, Duration.ZERO, null, failure);
            giveBack(tag);
        }
    }


    /** Sends a message that came back early to the level of what remains; not an attempt. */
    private void delayAgain(long tag, AMQP.BasicProperties properties, byte[] body, long remainingMillis) {
        Map<String, Object> headers = HeaderCodec.copyForRepublish(properties.getHeaders());
        if (republish(topology.delayQueue(topology.levelFor(remainingMillis)), properties, headers, body)) {
            ack(tag);
        } else {
            giveBack(tag);
        }
    }

    /** Publishes and waits for the broker's confirm; false when it did not come. */
    private boolean republish(String queue, AMQP.BasicProperties properties, Map<String, Object> headers, byte[] body) {
        try {
            publisher.publish(queue, properties.builder().headers(headers).build(), body)
                    .get(confirmTimeoutNanos, TimeUnit.NANOSECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | TimeoutException e) {
            return false;
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
                      long firstAtMillis, Duration delay, EndReason reason, Throwable failure) {
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
