package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.inbox.Inbox;
import dev.stagger.jdbc.SqliteDataSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One record delivered twice: the first consumer's handler commits its transaction, then the
 * consumer is stopped before the offset is committed (its handler interrupted by a forced close,
 * as a crash between the two would leave it); a second consumer of the group gets the record
 * again. With the record's {@link KafkaMessage#id()} in an {@link Inbox} in the handler's
 * transaction the effect happens once; without it, twice (at least once).
 */
class ExactlyOnceWithInboxTest extends BrokerTest {
    @TempDir
    Path dir;

    @Test
    void withTheInboxARecordDeliveredTwiceTakesEffectOnce() throws Exception {
        Run run = deliverTwice(true);
        assertThat(run.handled()).as("the handler ran for both deliveries").isEqualTo(2);
        assertThat(run.effects()).isEqualTo(1);
    }

    @Test
    void withoutTheInboxARecordDeliveredTwiceTakesEffectTwice() throws Exception {
        Run run = deliverTwice(false);
        assertThat(run.handled()).isEqualTo(2);
        assertThat(run.effects()).as("at least once: the effect repeats").isEqualTo(2);
    }

    private record Run(int handled, long effects) {
    }

    private Run deliverTwice(boolean withInbox) throws Exception {
        SqliteDataSource ds = SqliteDataSource.file(dir.resolve("effects.db"));
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE effects (message_id TEXT NOT NULL)");
        }
        Inbox inbox = Inbox.builder("kafka-orders", ds).build();
        String topic = TestKafka.uniqueTopic("inbox");
        AtomicInteger handled = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        CountDownLatch committed = new CountDownLatch(1);
        KafkaHandler handler = m -> {
            int delivery = handled.incrementAndGet();
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                if (!withInbox || inbox.record(c, m.id())) {
                    try (PreparedStatement ps = c.prepareStatement("INSERT INTO effects (message_id) VALUES (?)")) {
                        ps.setString(1, m.id());
                        ps.executeUpdate();
                    }
                }
                c.commit();
            }
            finished.incrementAndGet();
            if (delivery == 1) {
                committed.countDown();
                new CountDownLatch(1).await(); // the handler's transaction is committed, the offset is not: stopped here
            }
        };
        KafkaRetryConsumer first = start(KafkaRetryConsumer.builder(topic, config, handler));
        TestKafka.send(producer, new ProducerRecord<>(topic, "k".getBytes(StandardCharsets.UTF_8),
                "order-1".getBytes(StandardCharsets.UTF_8)));
        assertThat(committed.await(WITHIN.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        first.close(); // the handler does not finish: interrupted, its record not settled, the offset not committed
        start(KafkaRetryConsumer.builder(topic, config, handler));
        assertThat(TestKafka.await(WITHIN, () -> finished.get() >= 2)).as("delivered again, its transaction done").isTrue();
        return new Run(handled.get(), effects(ds));
    }

    private static long effects(SqliteDataSource ds) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM effects")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
