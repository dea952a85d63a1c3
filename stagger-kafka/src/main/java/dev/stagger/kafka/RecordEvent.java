package dev.stagger.kafka;

import dev.stagger.EndReason;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link KafkaRetryConsumer} did with one record, told to its {@link RecordListener}s.
 *
 * @param consumer the consumer's name
 * @param topic the work topic
 * @param consumedFrom the topic the record was consumed from (the work topic or a delay topic)
 * @param partition its partition there
 * @param offset its offset there
 * @param id where the record was first consumed ({@link KafkaMessage#id()})
 * @param attempt the attempt this delivery was, 1 for the first
 * @param maxAttempts attempts allowed in all by the consumer's policy
 * @param outcome what became of it
 * @param handlerTime how long the handler ran (zero when it did not run)
 * @param elapsed the time since the record's first attempt began
 * @param delay the wait before the next attempt (RETRIED), or before producing the copy again (RETURNED); else zero
 * @param endReason why a DEAD_LETTERED record ended, else null
 * @param failure the handler's failure (or the producer's, for RETURNED), null when there was none
 */
public record RecordEvent(String consumer, String topic, String consumedFrom, int partition, long offset, String id, int attempt,
                          int maxAttempts, RecordOutcome outcome, Duration handlerTime, Duration elapsed, Duration delay,
                          @Nullable EndReason endReason, @Nullable Throwable failure) {
    public RecordEvent {
        Objects.requireNonNull(consumer, "consumer must not be null");
        Objects.requireNonNull(topic, "topic must not be null");
        Objects.requireNonNull(consumedFrom, "consumedFrom must not be null");
        Objects.requireNonNull(id, "id must not be null");
        Objects.requireNonNull(outcome, "outcome must not be null");
        Objects.requireNonNull(handlerTime, "handlerTime must not be null");
        Objects.requireNonNull(elapsed, "elapsed must not be null");
        Objects.requireNonNull(delay, "delay must not be null");
    }

    /** Why a DEAD_LETTERED record ended. */
    public Optional<EndReason> reason() {
        return Optional.ofNullable(endReason);
    }

    /** The failure, when there was one. */
    public Optional<Throwable> error() {
        return Optional.ofNullable(failure);
    }
}
