package dev.stagger.observability;

import dev.stagger.EndReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The meters and log lines of a queue consumer's outcomes, from plain values: one home for
 * {@link MessageTelemetry} (RabbitMQ) and {@link RecordTelemetry} (Kafka), so both brokers' consumers
 * show the same meters and lines. Immutable and thread-safe.
 */
final class ConsumerTelemetry {
    /** What became of one delivery, as the meters tag it. */
    enum Outcome { SUCCEEDED, RETRIED, DEAD_LETTERED, RETURNED }

    private final @Nullable MeterRegistry registry;
    private final @Nullable RetryLog log;
    private final Map<String, Meters> meters;

    ConsumerTelemetry(@Nullable MeterRegistry registry, @Nullable RetryLog log, Map<String, Meters> meters) {
        this.registry = registry;
        this.log = log;
        this.meters = meters;
    }

    static ConsumerTelemetry of(MeterRegistry registry) {
        return new ConsumerTelemetry(registry, null, new ConcurrentHashMap<>());
    }

    static ConsumerTelemetry of(RetryLog log) {
        return new ConsumerTelemetry(null, log, Map.of());
    }

    ConsumerTelemetry withLog(RetryLog log) {
        return new ConsumerTelemetry(registry, log, meters);
    }

    /**
     * @param queue the work queue or topic
     * @param id the message's id, or null
     */
    void on(String consumer, String queue, @Nullable String id, int attempt, int maxAttempts, Outcome outcome,
            Duration handlerTime, Duration elapsed, Duration delay, @Nullable EndReason reason, @Nullable Throwable failure) {
        if (registry != null) {
            Meters m = meters.computeIfAbsent(consumer, name -> new Meters(registry, name));
            Objects.requireNonNull(m.outcomes.get(outcome), "outcome").increment(); // a counter per outcome, made up front
            if (outcome != Outcome.RETURNED || !handlerTime.isZero()) {
                m.handler.record(handlerTime);
            }
            if (outcome == Outcome.RETRIED) {
                m.delay.record(delay);
            } else if (outcome == Outcome.DEAD_LETTERED) {
                EndReason r = reason != null ? reason : EndReason.NOT_RETRYABLE;
                m.dead.computeIfAbsent(r, x -> Counter.builder(MessageTelemetry.DEAD_LETTERS).tag("name", consumer)
                        .tag("reason", x.name().toLowerCase(Locale.ROOT)).register(registry)).increment();
            }
        }
        if (log != null) {
            String error = failure == null ? null : failure.getClass().getSimpleName();
            if (outcome == Outcome.RETRIED) {
                log.logRetry(MessageTelemetry.RETRY_EVENT, consumer, queue, attempt, maxAttempts, null, delay.toMillis(), id,
                        error);
            } else if (outcome == Outcome.DEAD_LETTERED) {
                log.logGiveUp(MessageTelemetry.DEAD_EVENT, consumer, queue, attempt, maxAttempts, null, elapsed.toMillis(), id,
                        reason == null ? null : reason.name().toLowerCase(Locale.ROOT), error);
            }
        }
    }

    /** One consumer's meters, created on its first event. */
    static final class Meters {
        final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);
        final Map<EndReason, Counter> dead = new ConcurrentHashMap<>();
        final Timer delay;
        final Timer handler;

        Meters(MeterRegistry registry, String name) {
            for (Outcome o : Outcome.values()) {
                outcomes.put(o, Counter.builder(MessageTelemetry.MESSAGES).tag("name", name)
                        .tag("outcome", o.name().toLowerCase(Locale.ROOT)).register(registry));
            }
            delay = Timer.builder(MessageTelemetry.RETRY_DELAY).tag("name", name).publishPercentiles(0.5, 0.9, 0.99)
                    .register(registry);
            handler = Timer.builder(MessageTelemetry.HANDLER_DURATION).tag("name", name).register(registry);
        }
    }
}
