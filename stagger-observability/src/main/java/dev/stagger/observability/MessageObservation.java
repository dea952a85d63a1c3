package dev.stagger.observability;

import dev.stagger.RetryListener;
import dev.stagger.rabbitmq.Message;
import dev.stagger.rabbitmq.MessageEvent;
import dev.stagger.rabbitmq.MessageListener;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer {@link io.micrometer.observation.Observation}s for a {@code RabbitConsumer}'s
 * deliveries: each run of the handler is a call observation ({@value RetryObservation#CALL},
 * contextual name {@code message <queue>}) with one attempt child ({@value RetryObservation#ATTEMPT}),
 * with {@link RetryObservation}'s keys: {@value RetryObservation#NAME} is the work queue; the
 * attempt carries its number in the message's life and the attempts before it, the verdict,
 * {@value RetryObservation#DECISION} ({@code retry}, {@code success}, {@code recovered}, the end
 * reason of a dead-lettered message, {@code returned}) and {@code error.type}; the call carries
 * {@value RetryObservation#REASON} ({@code rescheduled} when a copy waits for the next attempt,
 * else the decision), the wait before the next attempt as an event, and the message id as the
 * high-cardinality key {@value #MESSAGE_ID}. While the handler runs its attempt is the current
 * observation on the handler's thread, so the spans the handler starts are its children.
 *
 * <pre>{@code
 * RabbitConsumer consumer = RabbitConsumer.builder(connectionFactory, "orders", handler)
 *         .messageListener(MessageObservation.of(observationRegistry))
 *         .build();
 * }</pre>
 *
 * <p>The outcome is told once it is safe on the broker, often on another thread; it is matched to
 * its run by the message's {@code message-id} property and attempt. A message published without a
 * message id has its observations ended as the handler returns, without the decision.
 */
public final class MessageObservation implements MessageListener {
    /** High-cardinality key on the call: the message's id. */
    public static final String MESSAGE_ID = "stagger.message.id";

    private final ObservationRegistry registry;
    private final ConsumerRuns runs;

    private MessageObservation(ObservationRegistry registry) {
        this.registry = registry;
        this.runs = new ConsumerRuns(registry, "message", MESSAGE_ID);
    }

    /** Observes deliveries into {@code registry}. */
    public static MessageObservation of(ObservationRegistry registry) {
        return new MessageObservation(Objects.requireNonNull(registry, "registry"));
    }

    @Override
    public RetryListener.@Nullable Scope onHandling(Message message) {
        return runs.handling(message.queue(), message.id().orElse(null), message.attempt());
    }

    @Override
    public void onMessage(MessageEvent event) {
        ConsumerRuns.Settled outcome = switch (event.outcome()) {
            case SUCCEEDED -> ConsumerRuns.Settled.SUCCEEDED;
            case RETRIED -> ConsumerRuns.Settled.RETRIED;
            case DEAD_LETTERED -> ConsumerRuns.Settled.DEAD_LETTERED;
            case RETURNED -> ConsumerRuns.Settled.RETURNED;
        };
        runs.settled(event.queue(), event.messageId().orElse(null), event.attempt(), outcome, event.delay(),
                event.endReason().orElse(null), event.failure().orElse(null));
    }

    @Override
    public String toString() {
        return "MessageObservation{" + registry + "}";
    }
}
