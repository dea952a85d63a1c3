package dev.stagger.kafka;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.inbox.Inbox;
import dev.stagger.inbox.testsupport.CrashFixture;
import dev.stagger.jdbc.SqliteDataSource;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Kafka consumer in its own JVM for {@link CrashSafetyTest} and {@link GroupCrashSafetyTest}:
 * {@code CrashConsumerProcess TOPIC DB MODE CRASH_POINT CRASH_AT [MEMBER]}. DB is a SQLite file (effects in
 * table {@code effects}, the inbox's default table). MODE is {@code inbox} (the effect and the
 * inbox row of {@link KafkaMessage#id()} in one transaction) or {@code plain} (the effect alone),
 * either with {@code -memory} after it (retries kept in memory, {@code inMemoryRetries}).
 * Every tenth record fails its first attempt and is retried through a delay topic. At the
 * CRASH_AT-th time this process reaches CRASH_POINT ({@code before-commit}: the effect written,
 * its transaction not committed; {@code after-commit}: committed, the handler not yet returned, so
 * the offset not committed; {@code after-produce}: a retry's copy acknowledged by the broker, the
 * original's offset not committed; {@code none}) it prints "crash-point" and stops that thread,
 * and the test kills the process with SIGKILL. Prints "ready" once started; SIGTERM closes the
 * consumer gracefully. MEMBER (default {@code crash-consumer}) is the static group member's
 * {@code group.instance.id}, so a process started again with it takes over the killed one's
 * partitions at once instead of after its session timeout; {@code dynamic} makes a dynamic member
 * (one that leaves the group when closed, and whose partitions a kill holds for the session timeout).
 */
public final class CrashConsumerProcess {
    private CrashConsumerProcess() {
    }

    public static void main(String[] args) throws Exception {
        String topic = args[0];
        SqliteDataSource ds = SqliteDataSource.file(Path.of(args[1]), Duration.ofSeconds(30));
        String crashPoint = args[3];
        int crashAt = Integer.parseInt(args[4]);
        Runnable point = new CrashFixture.CrashPoint(crashAt);
        Inbox inbox = args[2].startsWith("inbox") ? Inbox.builder("crash-test", ds).build() : null;
        ThreadLocal<Connection> connections = ThreadLocal.withInitial(() -> {
            try {
                return ds.getConnection();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
        KafkaHandler handler = message -> {
            String id = message.id();
            if (message.attempt() == 1 && Math.floorMod(id.hashCode(), 10) == 0) {
                throw new IOException("first attempt of " + id + " fails");
            }
            CrashFixture.applyEffect(connections.get(), inbox, "effects", id, crashPoint, point);
        };
        String member = args.length > 5 ? args[5] : "crash-consumer";
        Map<String, Object> config = new HashMap<>(Map.of("bootstrap.servers", TestKafka.bootstrap(),
                "session.timeout.ms", 6_000, "heartbeat.interval.ms", 1_000));
        if (!member.equals("dynamic")) {
            config.put("group.instance.id", member);
        }
        KafkaRetryConsumer.Builder builder = KafkaRetryConsumer.builder(topic, config, handler);
        if (args[2].endsWith("-memory")) {
            builder.inMemoryRetries(Duration.ofSeconds(1), 1_000); // the 20 ms retries wait in memory, not in a topic
        }
        KafkaRetryConsumer consumer = builder
                .policy(RetryPolicy.builder().maxAttempts(10).backoff(Backoff.fixed(Duration.ofMillis(20))).build())
                .delayLevels(List.of(Duration.ofMillis(20), Duration.ofMillis(100)))
                .concurrency(4).shutdownTimeout(Duration.ofSeconds(5))
                .recordListener(e -> {
                    if (e.outcome() == RecordOutcome.RETRIED && crashPoint.equals("after-produce")) {
                        point.run(); // told after the copy is acknowledged, before the original's offset is committed
                    }
                })
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(consumer::close));
        consumer.start();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
