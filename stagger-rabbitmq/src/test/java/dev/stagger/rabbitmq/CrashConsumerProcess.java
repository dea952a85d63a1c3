package dev.stagger.rabbitmq;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.inbox.Inbox;
import dev.stagger.inbox.testsupport.CrashFixture;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testsupport.jdbc.TestDatabases;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * A consumer in its own JVM for {@link CrashSafetyTest}:
 * {@code CrashConsumerProcess QUEUE DB MODE CRASH_POINT CRASH_AT}. DB is a SQLite file (effects in
 * table {@code effects}, the inbox's default table) or {@code postgresql:SUFFIX} (the test
 * PostgreSQL of {@link TestDatabases}, tables {@code stagger_crash_effects_SUFFIX} and
 * {@code stagger_crash_SUFFIX_inbox}). MODE is {@code inbox}
 * (the effect and the inbox row in one transaction) or {@code plain} (the effect alone). Every
 * tenth message fails its first attempt and is retried, in place (10 ms) except at the crash point
 * {@code after-republish}, where it goes through a delay queue. At the CRASH_AT-th
 * time this process reaches CRASH_POINT ({@code before-commit}: the effect written but not
 * committed; {@code after-commit}: committed, the handler not yet returned; {@code after-republish}:
 * a retry's copy confirmed by the broker, the original not yet acknowledged, with every retry a copy;
 * {@code in-place-wait}: a retry made in place about to wait, the original unacknowledged; {@code none}) it
 * prints "crash-point" and stops that thread, and the test kills the process with SIGKILL.
 * Prints "ready" once consuming; SIGTERM closes the consumer gracefully.
 */
public final class CrashConsumerProcess {
    private CrashConsumerProcess() {
    }

    public static void main(String[] args) throws Exception {
        String queue = args[0];
        boolean postgres = args[1].startsWith("postgresql:");
        DataSource ds = postgres ? TestDatabases.postgres()
                : SqliteDataSource.file(Path.of(args[1]), Duration.ofSeconds(30));
        String effects = postgres ? effectsTable(args[1]) : "effects";
        boolean useInbox = args[2].equals("inbox");
        String crashPoint = args[3];
        int crashAt = Integer.parseInt(args[4]);
        Runnable point = new CrashFixture.CrashPoint(crashAt);
        Inbox inbox = !useInbox ? null : postgres ? Inbox.builder("crash-test", ds).tablePrefix(inboxPrefix(args[1])).build()
                : Inbox.builder("crash-test", ds).build();
        ThreadLocal<Connection> connections = ThreadLocal.withInitial(() -> {
            try {
                return ds.getConnection();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
        MessageHandler handler = message -> {
            String id = message.id().orElseThrow();
            if (message.attempt() == 1 && Math.floorMod(id.hashCode(), 10) == 0) {
                throw new IOException("first attempt of " + id + " fails");
            }
            CrashFixture.applyEffect(connections.get(), inbox, effects, id, crashPoint, point);
        };
        RabbitConsumer consumer = RabbitConsumer.builder(queue, TestBroker.factory(), handler)
                .policy(RetryPolicy.builder().maxAttempts(10).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(TestBroker.levels(10, 100))
                .concurrency(4).prefetch(50).shutdownTimeout(Duration.ofSeconds(5))
                // after-republish needs the copies; otherwise the 10 ms retries are made in place
                .retryInPlace(crashPoint.equals("after-republish") ? Duration.ZERO : Duration.ofMillis(50))
                .messageListener(e -> {
                    if (e.outcome() == MessageOutcome.RETRIED
                            && (crashPoint.equals("after-republish") || crashPoint.equals("in-place-wait"))) {
                        // a copy: told after it is confirmed and before the original is acknowledged;
                        // in place: told when the retry starts to wait, the original unacknowledged
                        point.run();
                    }
                })
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(consumer::close));
        consumer.start();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    /** The effects table for DB {@code postgresql:SUFFIX}. */
    static String effectsTable(String db) {
        return "stagger_crash_effects_" + db.substring("postgresql:".length());
    }

    /** The inbox's table prefix for DB {@code postgresql:SUFFIX}. */
    static String inboxPrefix(String db) {
        return "stagger_crash_" + db.substring("postgresql:".length()) + "_";
    }
}
