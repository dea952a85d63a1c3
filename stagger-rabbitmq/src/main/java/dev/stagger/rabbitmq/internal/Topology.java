package dev.stagger.rabbitmq.internal;

import com.rabbitmq.client.Channel;
import dev.stagger.internal.DelayLevels;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The queues around one work queue {@code Q}: a delay queue {@code Q.stagger.delay-<millis>ms}
 * per delay level, whose queue-wide {@code x-message-ttl} dead-letters each message back to
 * {@code Q} through the default exchange when its time is up, and the dead-letter queue
 * {@code Q.stagger.dead}. All messages in a delay queue have the same TTL, so they expire in
 * arrival order and none waits behind a longer one: a 100 ms retry never queues behind a
 * 10-minute one, because they sit in different queues. Immutable.
 */
public final class Topology {
    private final String queue;
    private final long[] levelsMillis;

    /** @param levelsMillis the delay levels, strictly ascending, each at least 1 ms */
    public Topology(String queue, long[] levelsMillis) {
        this.queue = queue;
        this.levelsMillis = levelsMillis.clone();
    }

    public static String deadQueue(String queue) {
        return queue + ".stagger.dead";
    }

    public String queue() {
        return queue;
    }

    public String deadQueue() {
        return deadQueue(queue);
    }

    public String delayQueue(long levelMillis) {
        return queue + ".stagger.delay-" + levelMillis + "ms";
    }

    public List<String> delayQueues() {
        return java.util.Arrays.stream(levelsMillis).mapToObj(this::delayQueue).toList();
    }

    /**
     * The level a delay of {@code delayMillis} (> 0) waits in: the smallest level at least as long,
     * so the message arrives no earlier than due; past the largest level, the largest (the message
     * is then delayed again for what remains when it comes back).
     */
    public long levelFor(long delayMillis) {
        return DelayLevels.levelFor(levelsMillis, delayMillis);
    }

    /** Declares the work queue (durable, unless it exists already), the delay queues and the dead-letter queue. */
    public void declare(Channel channel, boolean declareWorkQueue) throws IOException {
        if (declareWorkQueue) {
            channel.queueDeclare(queue, true, false, false, null);
        }
        for (long level : levelsMillis) {
            channel.queueDeclare(delayQueue(level), true, false, false, Map.of(
                    "x-message-ttl", level,
                    "x-dead-letter-exchange", "",
                    "x-dead-letter-routing-key", queue));
        }
        channel.queueDeclare(deadQueue(), true, false, false, null);
    }

    /** The default levels ({@link DelayLevels#defaults()}). */
    public static List<Duration> defaultLevels() {
        return DelayLevels.defaults();
    }
}
