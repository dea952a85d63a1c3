package dev.stagger.observability;

import dev.stagger.rabbitmq.MessageEvent;
import dev.stagger.rabbitmq.MessageListener;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Meters and log lines for queue consumers, built from a {@code RabbitConsumer}'s
 * {@link MessageEvent}s.
 *
 * <pre>{@code
 * RabbitConsumer consumer = RabbitConsumer.builder("orders", factory, handler)
 *         .messageListener(MessageTelemetry.of(registry).withLog(RetryLog.builder().build()))
 *         .build();
 * }</pre>
 *
 * <h2>Meters</h2>
 * Every meter carries the tag {@code name} (the consumer's name); tag values come from fixed sets.
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>Name</th><th>Type</th><th>Extra tags</th><th>Counts</th></tr>
 *   <tr><td>{@value #MESSAGES}</td><td>counter</td><td>{@code outcome} = succeeded | retried |
 *       dead_lettered | returned</td><td>deliveries, by what became of them</td></tr>
 *   <tr><td>{@value #RETRY_DELAY}</td><td>timer</td><td></td><td>waits scheduled before retries
 *       (the backoff's delay; the delay queue's level rounds it up)</td></tr>
 *   <tr><td>{@value #DEAD_LETTERS}</td><td>counter</td><td>{@code reason} = exhausted |
 *       not_retryable | deadline | interrupted</td><td>messages sent to the dead-letter queue</td></tr>
 *   <tr><td>{@value #HANDLER_DURATION}</td><td>timer</td><td></td><td>how long the handler ran</td></tr>
 * </table>
 *
 * <h2>Log lines</h2>
 * Through a {@link RetryLog}, with the same keys as every other retry line: a retry writes
 * {@code event=message_retry} with {@code service} (the consumer), {@code operation} (the queue),
 * {@code attempt}, {@code max_attempts}, {@code delay_ms}, {@code request_id} (the message id) and
 * {@code reason} (the exception's simple class name); a dead letter writes
 * {@code event=message_dead} at WARN with {@code reason} (the end reason in lower case),
 * {@code attempts}, {@code max_attempts}, {@code elapsed_ms} (since the first attempt),
 * {@code request_id} and {@code error}.
 *
 * <p>Immutable and thread-safe.
 */
public final class MessageTelemetry implements MessageListener {
    /** Deliveries, tagged {@code name} and {@code outcome}. */
    public static final String MESSAGES = "stagger.messages";
    /** Waits scheduled before retries, tagged {@code name}. */
    public static final String RETRY_DELAY = "stagger.message.retry.delay";
    /** Messages dead-lettered, tagged {@code name} and {@code reason}. */
    public static final String DEAD_LETTERS = "stagger.messages.dead";
    /** Handler run time, tagged {@code name}. */
    public static final String HANDLER_DURATION = "stagger.message.handler.duration";
    /** The {@code event} value of a retry line. */
    public static final String RETRY_EVENT = "message_retry";
    /** The {@code event} value of a dead-letter line. */
    public static final String DEAD_EVENT = "message_dead";

    private final ConsumerTelemetry telemetry;

    private MessageTelemetry(ConsumerTelemetry telemetry) {
        this.telemetry = telemetry;
    }

    /** Meters in {@code registry}, no log lines. */
    public static MessageTelemetry of(MeterRegistry registry) {
        return new MessageTelemetry(ConsumerTelemetry.of(Objects.requireNonNull(registry, "registry must not be null")));
    }

    /** Log lines through {@code log}, no meters. */
    public static MessageTelemetry of(RetryLog log) {
        return new MessageTelemetry(ConsumerTelemetry.of(Objects.requireNonNull(log, "log must not be null")));
    }

    /** This telemetry writing its lines through {@code log} as well. */
    public MessageTelemetry withLog(RetryLog log) {
        return new MessageTelemetry(telemetry.withLog(Objects.requireNonNull(log, "log must not be null")));
    }

    @Override
    public void onMessage(MessageEvent e) {
        telemetry.on(e.consumer(), e.queue(), e.messageId().orElse(null), e.attempt(), e.maxAttempts(),
                ConsumerTelemetry.Outcome.valueOf(e.outcome().name()), e.handlerTime(), e.elapsed(), e.delay(),
                e.endReason().orElse(null), e.failure().orElse(null));
    }
}
