package dev.stagger.rabbitmq;

import com.rabbitmq.client.AMQP;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One delivery as a {@link MessageHandler} sees it. A plain value: handler tests can make their
 * own.
 *
 * @param queue the work queue it was consumed from
 * @param body the payload (not copied: do not modify)
 * @param properties the AMQP properties as published, headers included
 * @param redelivered true when the broker delivered it before without an acknowledgement (a
 *     consumer crashed or lost its connection): the handler may have run for it already
 * @param attempt the attempt this delivery is, 1 for the first ({@link MessageHeaders#ATTEMPT})
 * @param firstAttemptAt when the first attempt ran ({@link MessageHeaders#FIRST_ATTEMPT_AT}; now, on the first)
 * @param history the failures of the earlier attempts, oldest first
 */
public record Message(String queue, byte[] body, AMQP.BasicProperties properties, boolean redelivered, int attempt,
                      Instant firstAttemptAt, List<MessageError> history) {
    public Message {
        Objects.requireNonNull(queue, "queue must not be null");
        Objects.requireNonNull(body, "body must not be null");
        Objects.requireNonNull(properties, "properties must not be null");
        Objects.requireNonNull(firstAttemptAt, "firstAttemptAt must not be null");
        history = List.copyOf(history);
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be at least 1, got " + attempt);
        }
    }

    /** The publisher's {@code message-id} property: the key for an inbox. */
    public Optional<String> id() {
        return Optional.ofNullable(properties.getMessageId());
    }

    /** The message's headers, empty when it has none. */
    public Map<String, Object> headers() {
        Map<String, Object> headers = properties.getHeaders();
        return headers == null ? Map.of() : headers;
    }

    @Override
    public String toString() {
        return "Message[queue=" + queue + ", id=" + id().orElse("-") + ", attempt=" + attempt + ", "
                + body.length + " bytes]";
    }
}
