package dev.stagger.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import dev.stagger.rabbitmq.internal.HeaderCodec;
import dev.stagger.rabbitmq.internal.Topology;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeoutException;

/**
 * Operates the dead-letter queue of one work queue ({@code <queue>.stagger.dead}): list the dead
 * messages with their history, send them back to the work queue for a fresh set of attempts, or
 * purge them. The {@code stagger rabbitmq dead|redrive|purge} commands call this.
 *
 * <p>Uses the given connection (one channel per operation) and never closes it. Not meant for
 * concurrent use on one queue by several operators: a list taken while a re-drive runs may miss
 * messages in flight.
 */
public final class DeadLetters {
    /** The most messages one {@link #list} or {@link #redrive} handles. */
    public static final int MAX_BATCH = 100_000;

    private final Connection connection;
    private final String queue;
    private final String deadQueue;
    private final Duration confirmTimeout;

    private DeadLetters(Connection connection, String queue, Duration confirmTimeout) {
        this.connection = connection;
        this.queue = queue;
        this.deadQueue = Topology.deadQueue(queue);
        this.confirmTimeout = confirmTimeout;
    }

    /** The dead letters of work queue {@code queue}, over {@code connection}. */
    public static DeadLetters of(Connection connection, String queue) {
        Objects.requireNonNull(connection, "connection must not be null");
        Objects.requireNonNull(queue, "queue must not be null");
        if (queue.isBlank()) {
            throw new IllegalArgumentException("queue must not be blank, got '" + queue + "'");
        }
        return new DeadLetters(connection, queue, Duration.ofSeconds(30));
    }

    /** The work queue. */
    public String queue() {
        return queue;
    }

    /** The dead-letter queue. */
    public String deadLetterQueue() {
        return deadQueue;
    }

    /** Messages in the dead-letter queue now. */
    public long count() throws IOException {
        return withChannel(ch -> ch.queueDeclarePassive(deadQueue).getMessageCount());
    }

    /**
     * Up to {@code limit} dead letters, oldest first, left in place: they are fetched without
     * acknowledgement and returned to the queue when the channel closes.
     */
    public List<DeadLetter> list(int limit) throws IOException {
        checkLimit(limit);
        return withChannel(ch -> {
            List<DeadLetter> out = new ArrayList<>();
            for (int i = 0; i < limit; i++) {
                GetResponse r = ch.basicGet(deadQueue, false);
                if (r == null) {
                    break;
                }
                out.add(describe(r.getProps(), r.getBody()));
            }
            return out; // closing the channel returns every fetched message to the queue
        });
    }

    /**
     * Sends up to {@code limit} dead letters back to the work queue as new messages: the attempt
     * count, first-attempt time, backoff state and end reason are cleared (the policy starts
     * over), the error history is kept and {@link MessageHeaders#REDRIVES} counts the re-drives.
     * Each is removed from the dead-letter queue only after the broker confirmed its copy, so an
     * interruption leaves at most a duplicate.
     *
     * <p>Each message moves at most once per call, even while a consumer runs and a re-driven
     * message fails again and comes back before the call ends: the call takes at most as many
     * messages as the dead-letter queue held when it began, marks each copy with the call's own
     * {@link MessageHeaders#REDRIVE_ID}, and stops at the first message that carries it (leaving
     * it in place).
     *
     * @return the number of messages re-driven
     */
    public int redrive(int limit) throws IOException {
        checkLimit(limit);
        return withChannel(ch -> {
            long present = ch.queueDeclarePassive(deadQueue).getMessageCount();
            String call = UUID.randomUUID().toString();
            ch.confirmSelect();
            java.util.concurrent.atomic.AtomicBoolean returned = new java.util.concurrent.atomic.AtomicBoolean();
            ch.addReturnListener(r -> returned.set(true));
            int moved = 0;
            while (moved < Math.min(limit, present)) {
                GetResponse r = ch.basicGet(deadQueue, false);
                if (r == null) {
                    break;
                }
                if (call.equals(HeaderCodec.text(r.getProps().getHeaders(), MessageHeaders.REDRIVE_ID))) {
                    ch.basicReject(r.getEnvelope().getDeliveryTag(), true); // moved by this call already
                    break;
                }
                Map<String, Object> headers = HeaderCodec.copyForRepublish(r.getProps().getHeaders());
                int redrives = (int) HeaderCodec.number(headers, MessageHeaders.REDRIVES, 0);
                for (String h : List.of(MessageHeaders.ATTEMPT, MessageHeaders.FIRST_ATTEMPT_AT, MessageHeaders.BACKOFF_STATE,
                        MessageHeaders.DUE_AT, MessageHeaders.END_REASON, MessageHeaders.DEAD_CAUSE, MessageHeaders.DEAD_AT,
                        MessageHeaders.PUBLISH_ID)) {
                    headers.remove(h);
                }
                headers.put(MessageHeaders.REDRIVES, redrives + 1);
                headers.put(MessageHeaders.REDRIVE_ID, call);
                ch.basicPublish("", queue, true, r.getProps().builder().headers(headers).build(), r.getBody());
                try {
                    ch.waitForConfirmsOrDie(confirmTimeout.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted waiting for the broker's confirm", e);
                } catch (TimeoutException e) {
                    throw new IOException("the broker did not confirm within " + confirmTimeout, e);
                }
                if (returned.get()) { // no such work queue: the dead letter stays where it is
                    throw new IOException("queue " + queue + " does not exist: re-drive stopped after " + moved);
                }
                ch.basicAck(r.getEnvelope().getDeliveryTag(), false);
                moved++;
            }
            return moved;
        });
    }

    /**
     * Deletes every message in the dead-letter queue.
     *
     * @return the number deleted
     */
    public int purge() throws IOException {
        return withChannel(ch -> ch.queuePurge(deadQueue).getMessageCount());
    }

    static DeadLetter describe(AMQP.BasicProperties properties, byte[] body) {
        Map<String, Object> h = properties.getHeaders();
        long deadAt = HeaderCodec.number(h, MessageHeaders.DEAD_AT, -1);
        return new DeadLetter(Optional.ofNullable(properties.getMessageId()), HeaderCodec.attempt(h),
                Optional.ofNullable(HeaderCodec.text(h, MessageHeaders.END_REASON)),
                deadAt < 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(deadAt)),
                (int) HeaderCodec.number(h, MessageHeaders.REDRIVES, 0), HeaderCodec.history(h), body.length,
                Optional.ofNullable(HeaderCodec.text(h, MessageHeaders.DEAD_CAUSE)),
                (int) Math.max(0, HeaderCodec.number(h, MessageHeaders.ERRORS_DROPPED, 0)));
    }

    private static void checkLimit(int limit) {
        if (limit < 1 || limit > MAX_BATCH) {
            throw new IllegalArgumentException("limit must be 1 to " + MAX_BATCH + ", got " + limit);
        }
    }

    private interface ChannelWork<T> {
        T run(Channel channel) throws IOException;
    }

    private <T> T withChannel(ChannelWork<T> work) throws IOException {
        Channel ch = connection.createChannel();
        try {
            return work.run(ch);
        } finally {
            if (ch.isOpen()) {
                try {
                    ch.close();
                } catch (TimeoutException | IOException | RuntimeException ignored) {
                    // unacknowledged messages go back to the queue either way
                }
            }
        }
    }
}
