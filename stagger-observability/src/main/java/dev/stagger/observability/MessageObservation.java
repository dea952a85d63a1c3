package dev.stagger.observability;

import dev.stagger.EndReason;
import dev.stagger.RetryListener;
import dev.stagger.rabbitmq.Message;
import dev.stagger.rabbitmq.MessageEvent;
import dev.stagger.rabbitmq.MessageListener;
import io.micrometer.observation.ObservationRegistry;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
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
    /** Runs whose outcome is not yet told, by queue, message id and attempt. */
    private final Map<Key, DurableRun> runs = new ConcurrentHashMap<>();

    private MessageObservation(ObservationRegistry registry) {
        this.registry = registry;
    }

    /** Observes deliveries into {@code registry}. */
    public static MessageObservation of(ObservationRegistry registry) {
        return new MessageObservation(Objects.requireNonNull(registry, "registry"));
    }

    private record Key(String queue, String id, int attempt) {
    }

    @Override
    public RetryListener.@Nullable Scope onHandling(Message message) {
        if (registry.isNoop()) {
            return null;
        }
        String id = message.id().orElse(null);
        String name = message.queue();
        DurableRun run = new DurableRun(registry, "message", name, message.attempt(), MESSAGE_ID, id);
        if (id == null) {
            return () -> {
                run.leave();
                run.end(null, "unknown", "unknown", message.attempt(), null);
            };
        }
        DurableRun earlier = runs.put(new Key(message.queue(), id, message.attempt()), run);
        if (earlier != null) {
            earlier.end(null, "returned", "returned", message.attempt() - 1, null); // redelivered before its outcome was told
        }
        return run::leave;
    }

    @Override
    public void onMessage(MessageEvent event) {
        String id = event.messageId().orElse(null);
        if (id == null) {
            return;
        }
        DurableRun run = runs.remove(new Key(event.queue(), id, event.attempt()));
        if (run == null) {
            return; // not run here (returned unopened), or not observed
        }
        String errorType = event.failure().map(f -> f.getClass().getName()).orElse(null);
        switch (event.outcome()) {
            case SUCCEEDED -> {
                String reason = DurableRun.succeeded(event.attempt());
                run.end("accept", reason, reason, event.attempt(), null);
            }
            case RETRIED -> {
                run.waitBefore(event.delay(), event.attempt() + 1);
                run.end("retry", "retry", DurableRun.RESCHEDULED, event.attempt(), errorType);
            }
            case DEAD_LETTERED -> {
                EndReason reason = event.endReason().orElse(EndReason.NOT_RETRYABLE);
                String why = DurableRun.lower(reason);
                run.end(reason == EndReason.EXHAUSTED || reason == EndReason.DEADLINE ? "retry" : "stop", why, why,
                        event.attempt(), errorType);
            }
            case RETURNED -> run.end(null, "returned", "returned", event.attempt() - 1, errorType);
        }
    }

    @Override
    public String toString() {
        return "MessageObservation{" + registry + "}";
    }
}
