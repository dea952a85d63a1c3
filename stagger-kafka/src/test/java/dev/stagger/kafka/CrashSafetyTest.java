package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.inbox.testsupport.CrashFixture;
import dev.stagger.jdbc.SqliteDataSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka consumers in separate JVMs ({@link CrashConsumerProcess}, one after another, on loopback)
 * killed with {@code kill -9} while handling records (before and after the handler's transaction
 * commits) and between a retry's acknowledged copy and the original's offset commit. Every record
 * must take effect (0 lost); with the inbox, exactly once (0 duplicate effects); without it, the
 * duplicates are counted and printed. Effects and inbox in SQLite.
 *
 * <p>The record count is {@code -Dstagger.crash.records}, default 2,000;
 * {@code -Dstagger.crash.kills} sets the kills per run (default 6). Bounded: a run that has not
 * finished in two minutes fails.
 */
class CrashSafetyTest {
    private static final int RECORDS = Integer.getInteger("stagger.crash.records", 2_000);
    private static final int KILLS = Integer.getInteger("stagger.crash.kills", 6);
    private static final List<String> POINTS = List.of("before-commit", "after-commit", "after-produce");
    private static final Duration RUN_LIMIT = Duration.ofSeconds(120);

    @TempDir
    Path dir;
    private CrashFixture.Child child;

    @AfterEach
    void stopChild() {
        if (child != null) {
            child.close();
        }
    }

    @Test
    void withTheInboxNoRecordIsLostAndNoneTakesEffectTwice() throws Exception {
        Counts counts = run("inbox");
        System.out.printf("kafka crash safety with the inbox: %d records, %d kills, %d lost, %d duplicate effects%n",
                RECORDS, counts.kills, counts.lost, counts.duplicates);
        assertThat(counts.lost).isZero();
        assertThat(counts.duplicates).isZero();
    }

    @Test
    void withRetriesInMemoryAndTheInboxNoRecordIsLostAndNoneTakesEffectTwice() throws Exception {
        // "after-produce" is told when a retry is kept in memory: the kill loses it with the process
        Counts counts = run("inbox-memory");
        System.out.printf("kafka crash safety with retries in memory and the inbox: %d records, %d kills, %d lost,"
                + " %d duplicate effects%n", RECORDS, counts.kills, counts.lost, counts.duplicates);
        assertThat(counts.lost).isZero();
        assertThat(counts.duplicates).isZero();
    }

    @Test
    void withoutTheInboxNoRecordIsLostAndTheDuplicatesAreCounted() throws Exception {
        Counts counts = run("plain");
        System.out.printf("kafka crash safety without the inbox: %d records, %d kills, %d lost, %d duplicate effects%n",
                RECORDS, counts.kills, counts.lost, counts.duplicates);
        assertThat(counts.lost).isZero();
        // a kill after the effect's commit and before the offset commit repeats the effect
        assertThat(counts.duplicates).isPositive();
    }

    private record Counts(long lost, long duplicates, int kills) {
    }

    private Counts run(String mode) throws Exception {
        Map<String, Object> config = TestKafka.config();
        String topic = TestKafka.uniqueTopic("crash-" + mode);
        TestKafka.createTopic(config, topic, 4);
        Path db = dir.resolve("effects.db");
        SqliteDataSource ds = SqliteDataSource.file(db);
        CrashFixture.execute(ds, "CREATE TABLE effects (message_id TEXT NOT NULL, pid INTEGER NOT NULL)");
        try (KafkaProducer<byte[], byte[]> producer = TestKafka.producer(config)) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                        ("record " + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }

        long deadline = System.nanoTime() + RUN_LIMIT.toNanos();
        Random random = new Random(35);
        int kills = 0;
        for (int k = 0; k < KILLS; k++) {
            String point = POINTS.get(k % POINTS.size());
            // retried records are a tenth of all: their crash point comes a tenth as often
            int bound = Math.max(2, RECORDS / KILLS / (point.equals("after-produce") ? 20 : 2));
            child = start(topic, db, mode, point, 1 + random.nextInt(bound));
            if ("crash-point".equals(child.nextReport(deadline))) {
                child.kill9();
                kills++;
            } else {
                child.close(); // everything was done before the crash point
            }
        }
        child = start(topic, db, mode, "none", 0);
        while (System.nanoTime() < deadline && distinctEffects(ds) < RECORDS) {
            Thread.sleep(100);
        }
        // SIGTERM: the consumer closes gracefully and commits what it finished
        assertThat(child.terminate()).as("consumer exited").isTrue();
        assertThat(kills).as("processes killed at a crash point").isGreaterThanOrEqualTo(KILLS - 1);
        assertThat(TestKafka.readAll(config, topic + ".stagger.dlt", 1, Duration.ofSeconds(1))).as("dead letters").isEmpty();
        assertThat(lag(config, topic)).as("records of the work topic not committed").isZero();
        long all = CrashFixture.scalar(ds, "SELECT COUNT(*) FROM effects");
        long done = distinctEffects(ds);
        return new Counts(RECORDS - done, all - done, kills);
    }

    private CrashFixture.Child start(String topic, Path db, String mode, String point, int at) throws Exception {
        return CrashFixture.Child.start(CrashConsumerProcess.class, topic, db.toString(), mode, point, String.valueOf(at));
    }

    /** The work topic's records after the group's committed offsets. */
    static long lag(Map<String, Object> config, String topic) throws Exception {
        try (Admin admin = Admin.create(config)) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(topic)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            List<TopicPartition> parts = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get(topic).partitions().stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            var ends = admin.listOffsets(parts.stream().collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest())))
                    .all().get(30, TimeUnit.SECONDS);
            long lag = 0;
            for (TopicPartition tp : parts) {
                OffsetAndMetadata at = committed.get(tp);
                lag += ends.get(tp).offset() - (at == null ? 0 : at.offset());
            }
            return lag;
        }
    }

    static long distinctEffects(SqliteDataSource ds) throws SQLException {
        return CrashFixture.scalar(ds, "SELECT COUNT(DISTINCT message_id) FROM effects");
    }
}
