package dev.stagger.rabbitmq.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.ReturnListener;
import com.rabbitmq.client.ShutdownSignalException;
import dev.stagger.rabbitmq.MessageHeaders;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Publishes on one channel in confirm mode and tells each publisher when the broker has taken
 * responsibility for its message. A publish is {@code mandatory}: a message no queue would take
 * (a delay queue deleted under us) comes back as a return and fails its future instead of
 * vanishing. A closed channel fails every future still pending; with automatic recovery the
 * channel comes back with fresh sequence numbers, and new publishes are tracked from there.
 *
 * <p>Thread-safe: the sequence number and the publish are taken together under a lock (never held
 * while waiting for a confirm); confirms arrive on the connection's thread.
 */
public final class ConfirmingPublisher {
    private final Channel channel;
    private final ReentrantLock publishLock = new ReentrantLock();
    private final ConcurrentNavigableMap<Long, CompletableFuture<Void>> pending = new ConcurrentSkipListMap<>();

    public ConfirmingPublisher(Channel channel) throws IOException {
        this.channel = channel;
        channel.confirmSelect();
        channel.addConfirmListener(new ConfirmListener() {
            @Override
            public void handleAck(long seq, boolean multiple) {
                settle(seq, multiple, null);
            }

            @Override
            public void handleNack(long seq, boolean multiple) {
                settle(seq, multiple, new IOException("the broker refused the message (nack)"));
            }
        });
        channel.addReturnListener((ReturnListener) (replyCode, replyText, exchange, routingKey, properties, body) -> {
            long seq = HeaderCodec.number(properties.getHeaders(), MessageHeaders.PUBLISH_ID, -1);
            CompletableFuture<Void> f = pending.remove(seq);
            if (f != null) {
                f.completeExceptionally(new Unroutable("no queue took the message for routing key '" + routingKey
                        + "' (" + replyCode + " " + replyText + ")"));
            }
        });
        channel.addShutdownListener(this::failAll);
    }

    /**
     * Publishes {@code body} to {@code routingKey} through the default exchange.
     *
     * @return completes when the broker confirms the message, exceptionally when it refuses or
     *     returns it, or the channel closes first
     */
    public CompletableFuture<Void> publish(String routingKey, AMQP.BasicProperties properties, byte[] body) {
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        publishLock.lock();
        try {
            long seq = channel.getNextPublishSeqNo();
            Map<String, Object> headers = properties.getHeaders() == null ? new HashMap<>() : new HashMap<>(properties.getHeaders());
            headers.put(MessageHeaders.PUBLISH_ID, seq);
            pending.put(seq, confirmed);
            try {
                channel.basicPublish("", routingKey, true, properties.builder().headers(headers).build(), body);
            } catch (IOException | RuntimeException e) {
                pending.remove(seq);
                confirmed.completeExceptionally(e);
            }
        } finally {
            publishLock.unlock();
        }
        return confirmed;
    }

    /** A publish the broker returned: no queue took it (a queue deleted under the consumer). */
    public static final class Unroutable extends IOException {
        private static final long serialVersionUID = 1L;

        Unroutable(String message) {
            super(message);
        }
    }

    private void settle(long seq, boolean multiple, @Nullable Exception failure) {
        if (multiple) {
            ConcurrentNavigableMap<Long, CompletableFuture<Void>> upTo = pending.headMap(seq, true);
            for (Map.Entry<Long, CompletableFuture<Void>> e : upTo.entrySet()) {
                if (pending.remove(e.getKey(), e.getValue())) {
                    complete(e.getValue(), failure);
                }
            }
        } else {
            CompletableFuture<Void> f = pending.remove(seq);
            if (f != null) {
                complete(f, failure);
            }
        }
    }

    private static void complete(CompletableFuture<Void> f, @Nullable Exception failure) {
        if (failure == null) {
            f.complete(null);
        } else {
            f.completeExceptionally(failure);
        }
    }

    private void failAll(ShutdownSignalException cause) {
        for (Long seq : pending.keySet()) {
            CompletableFuture<Void> f = pending.remove(seq);
            if (f != null) {
                f.completeExceptionally(new IOException("the channel closed before the broker confirmed the message", cause));
            }
        }
    }
}
