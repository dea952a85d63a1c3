package dev.stagger.observability;

import dev.stagger.EndReason;
import dev.stagger.rabbitmq.MessageEvent;
import dev.stagger.rabbitmq.MessageListener;
import dev.stagger.rabbitmq.MessageOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

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

    private final MeterRegistry registry;
    private final RetryLog log;
    private final Map<String, Meters> meters;

    private MessageTelemetry(MeterRegistry registry, RetryLog log, Map<String, Meters> meters) {
        this.registry = registry;
        this.log = log;
        this.meters = meters;
    }

    /** Meters in {@code registry}, no log lines. */
    public static MessageTelemetry of(MeterRegistry registry) {
        return new MessageTelemetry(Objects.requireNonNull(registry, "registry must not be null"), null,
                new ConcurrentHashMap<>());
    }

    /** Log lines through {@code log}, no meters. */
    public static MessageTelemetry of(RetryLog log) {
        return new MessageTelemetry(null, Objects.requireNonNull(log, "log must not be null"), Map.of());
    }

    /** This telemetry writing its lines through {@code log} as well. */
    public MessageTelemetry withLog(RetryLog log) {
        return new MessageTelemetry(registry, Objects.requireNonNull(log, "log must not be null"), meters);
    }

    @Override
    public void onMessage(MessageEvent e) {
        if (registry != null) {
            record(e);
        }
        if (log != null) {
            write(e);
        }
    }

    private void record(MessageEvent e) {
        Meters m = meters.computeIfAbsent(e.consumer(), name -> new Meters(registry, name));
        m.outcomes.get(e.outcome()).increment();
        if (e.outcome() != MessageOutcome.RETURNED || !e.handlerTime().isZero()) {
            m.handler.record(e.handlerTime());
        }
        if (e.outcome() == MessageOutcome.RETRIED) {
            m.delay.record(e.delay());
        } else if (e.outcome() == MessageOutcome.DEAD_LETTERED) {
            EndReason reason = e.endReason().orElse(EndReason.NOT_RETRYABLE);
            m.dead.computeIfAbsent(reason, r -> Counter.builder(DEAD_LETTERS).tag("name", e.consumer())
                    .tag("reason", r.name().toLowerCase(Locale.ROOT)).register(registry)).increment();
        }
    }

    private void write(MessageEvent e) {
        String error = e.failure().map(f -> f.getClass().getSimpleName()).orElse(null);
        String id = e.messageId().orElse(null);
        if (e.outcome() == MessageOutcome.RETRIED) {
            log.logRetry(RETRY_EVENT, e.consumer(), e.queue(), e.attempt(), e.maxAttempts(), null,
                    e.delay().toMillis(), id, error);
        } else if (e.outcome() == MessageOutcome.DEAD_LETTERED) {
            log.logGiveUp(DEAD_EVENT, e.consumer(), e.queue(), e.attempt(), e.maxAttempts(), null,
                    e.elapsed().toMillis(), id, e.endReason().map(r -> r.name().toLowerCase(Locale.ROOT)).orElse(null),
                    error);
        }
    }

    /** One consumer's meters, created on its first event. */
    private static final class Meters {
        final Map<MessageOutcome, Counter> outcomes = new EnumMap<>(MessageOutcome.class);
        final Map<EndReason, Counter> dead = new ConcurrentHashMap<>();
        final Timer delay;
        final Timer handler;

        Meters(MeterRegistry registry, String name) {
            for (MessageOutcome o : MessageOutcome.values()) {
                outcomes.put(o, Counter.builder(MESSAGES).tag("name", name)
                        .tag("outcome", o.name().toLowerCase(Locale.ROOT)).register(registry));
            }
            delay = Timer.builder(RETRY_DELAY).tag("name", name).publishPercentiles(0.5, 0.9, 0.99).register(registry);
            handler = Timer.builder(HANDLER_DURATION).tag("name", name).register(registry);
        }
    }
}
