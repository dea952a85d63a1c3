package dev.stagger.kafka;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A record in a dead-letter topic, as {@link KafkaDeadLetters#list} shows it to an operator.
 *
 * @param partition its partition in the dead-letter topic
 * @param offset its offset there
 * @param origin where it was first consumed ({@link KafkaHeaders#ORIGIN}), when known
 * @param attempts the attempts made
 * @param endReason why it ended: an {@link dev.stagger.EndReason} name, or empty for a record put
 *     there by something else
 * @param deadAt when it was dead-lettered, when known
 * @param redrives how many times it was re-driven before
 * @param history its failures, oldest first
 * @param valueBytes the payload's size (the payload itself is not shown), -1 for none
 * @param cause why the consumer dead-lettered it for a reason of its own
 *     ({@link KafkaHeaders#DEAD_CAUSE}), when it did
 * @param historyDropped entries dropped from between the first and the latest of {@code history}
 */
public record KafkaDeadLetter(int partition, long offset, Optional<String> origin, int attempts,
                              Optional<String> endReason, Optional<Instant> deadAt, int redrives,
                              List<AttemptError> history, int valueBytes, Optional<String> cause, int historyDropped) {
    public KafkaDeadLetter {
        Objects.requireNonNull(origin, "origin must not be null");
        Objects.requireNonNull(endReason, "endReason must not be null");
        Objects.requireNonNull(deadAt, "deadAt must not be null");
        Objects.requireNonNull(cause, "cause must not be null");
        history = List.copyOf(history);
    }
}
