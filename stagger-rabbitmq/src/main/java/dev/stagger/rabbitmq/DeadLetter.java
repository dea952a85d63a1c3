package dev.stagger.rabbitmq;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A message in a dead-letter queue, as {@link DeadLetters#list} shows it to an operator.
 *
 * @param messageId the publisher's message-id, when it set one
 * @param attempts the attempts made
 * @param endReason why it ended: an {@link dev.stagger.EndReason} name, or empty for a message
 *     put there by something else
 * @param deadAt when it was dead-lettered, when known
 * @param redrives how many times it was re-driven before
 * @param history its failures, oldest first
 * @param bodyBytes the payload's size (the payload itself is not shown)
 * @param cause why the consumer dead-lettered it for a reason of its own rather than the
 *     policy's ({@link MessageHeaders#DEAD_CAUSE}: {@code UNPUBLISHABLE: ...},
 *     {@code DUE_AT_OUT_OF_RANGE: ...}), when it did
 * @param historyDropped entries dropped from between the first and the latest of {@code history}
 *     to bound its size
 */
public record DeadLetter(Optional<String> messageId, int attempts, Optional<String> endReason, Optional<Instant> deadAt,
                         int redrives, List<MessageError> history, int bodyBytes, Optional<String> cause,
                         int historyDropped) {
    public DeadLetter {
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(endReason, "endReason must not be null");
        Objects.requireNonNull(deadAt, "deadAt must not be null");
        Objects.requireNonNull(cause, "cause must not be null");
        history = List.copyOf(history);
    }

    /** A dead letter without a cause of the consumer's own and with its whole history. */
    public DeadLetter(Optional<String> messageId, int attempts, Optional<String> endReason, Optional<Instant> deadAt,
                      int redrives, List<MessageError> history, int bodyBytes) {
        this(messageId, attempts, endReason, deadAt, redrives, history, bodyBytes, Optional.empty(), 0);
    }
}
