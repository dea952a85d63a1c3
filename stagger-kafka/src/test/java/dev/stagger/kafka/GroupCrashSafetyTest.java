package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.inbox.testsupport.CrashFixture;
import dev.stagger.jdbc.SqliteDataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three consumer JVMs of one group ({@link CrashConsumerProcess}) at the same time on a topic of 6
 * partitions, every tenth record failing its first attempt (so retry copies are in flight), with
 * the inbox (effects and inbox in one SQLite file). Members are killed with {@code kill -9} at
 * their crash points (the effect written and not committed, committed before the offset, a retry's
 * copy acknowledged before the original's offset) while the others keep consuming, and started
 * again; a third member joins, is killed, joins again and leaves. The two first are static members
 * (a restarted one takes its partitions back at once), the third a dynamic one (a kill holds its
 * partitions for the session timeout, a close hands them over at once). Records are produced in
 * batches while this goes on. At the end: 0 records lost, 0 duplicate effects, nothing
 * dead-lettered, every work-topic offset committed. Bounded: fails if not done in 100 s.
 */
class GroupCrashSafetyTest {
    private static final int BATCH = 400;
    private static final Duration RUN_LIMIT = Duration.ofSeconds(100);

    @TempDir
    Path dir;
    private final List<Member> members = new ArrayList<>();
    private final ExecutorService readers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "crash-member-reader");
        t.setDaemon(true);
        return t;
    });
    private final Random random = new Random(3535);
    private long deadline;
    private String topic;
    private Path db;
    private int kills;
    private int killsBesideOthers;
    private int starts;

    @AfterEach
    void stopMembers() {
        members.forEach(m -> m.child.close());
        readers.shutdownNow();
    }

    @Test
    void membersKilledWhileOthersConsumeAndJoiningAndLeavingLoseNoRecordAndRepeatNoEffect() throws Exception {
        Map<String, Object> config = TestKafka.config();
        topic = TestKafka.uniqueTopic("group-crash");
        TestKafka.createTopic(config, topic, 6);
        db = dir.resolve("effects.db");
        SqliteDataSource ds = SqliteDataSource.file(db);
        CrashFixture.execute(ds, "CREATE TABLE effects (message_id TEXT NOT NULL, pid INTEGER NOT NULL)");
        deadline = System.nanoTime() + RUN_LIMIT.toNanos();
        int produced = 0;
        try (KafkaProducer<byte[], byte[]> producer = TestKafka.producer(config)) {
            start("crash-a", "before-commit", "after-produce", "after-commit");
            start("crash-b", "after-produce", "before-commit"); // a second member joins: a rebalance
            produced = batch(producer, ds, produced);
            Member c = start("dynamic", "after-commit");
            produced = batch(producer, ds, produced); // and a third
            while (!c.point.equals("none")) { // until it was killed and started again
                produced = batch(producer, ds, produced);
            }
            assertThat(c.child.terminate()).as("the third member left").isTrue();
            members.remove(c);
            produced = batch(producer, ds, produced); // the two first take its partitions over
            while (members.stream().anyMatch(m -> !m.point.equals("none"))) { // every planned crash point reached
                produced = batch(producer, ds, produced);
            }
        }
        for (Member m : members) {
            // SIGTERM: the consumer closes gracefully and commits what it finished
            assertThat(m.child.terminate()).as("consumer exited").isTrue();
        }
        long all = CrashFixture.scalar(ds, "SELECT COUNT(*) FROM effects");
        long done = CrashSafetyTest.distinctEffects(ds);
        long processes = CrashFixture.scalar(ds, "SELECT COUNT(DISTINCT pid) FROM effects");
        System.out.printf("kafka crash safety, 3 members at once with the inbox: %d records, %d processes started,"
                        + " %d killed (%d while another member consumed), %d wrote effects, %d lost, %d duplicate effects,"
                        + " %d s%n", produced, starts, kills, killsBesideOthers, processes, produced - done, all - done,
                Duration.ofNanos(System.nanoTime() - deadline + RUN_LIMIT.toNanos()).toSeconds());
        assertThat(produced - done).as("records lost").isZero();
        assertThat(all - done).as("duplicate effects").isZero();
        assertThat(kills).as("processes killed at a crash point").isEqualTo(6);
        assertThat(killsBesideOthers).as("kills while another member was consuming").isGreaterThanOrEqualTo(4);
        assertThat(processes).as("processes that wrote effects").isGreaterThanOrEqualTo(5);
        assertThat(TestKafka.readAll(config, topic + ".stagger.dlt", 1, Duration.ofSeconds(1))).as("dead letters").isEmpty();
        assertThat(CrashSafetyTest.lag(config, topic)).as("records of the work topic not committed").isZero();
    }

    /** Produces a batch and waits until every record produced took effect, killing and restarting members meanwhile. */
    private int batch(KafkaProducer<byte[], byte[]> producer, SqliteDataSource ds, int from) throws Exception {
        int to = from + BATCH;
        for (int i = from; i < to; i++) {
            producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("record " + i).getBytes(StandardCharsets.UTF_8)));
        }
        producer.flush();
        while (CrashSafetyTest.distinctEffects(ds) < to) {
            assertThat(System.nanoTime()).as("all records handled within %s", RUN_LIMIT).isLessThan(deadline);
            List<Member> crashed = new ArrayList<>();
            for (Member m : members) {
                if (m.report.isDone()) {
                    assertThat(m.report.join()).as("report of member %s at %s", m.name, m.point).isEqualTo("crash-point");
                    crashed.add(m);
                }
            }
            for (Member m : crashed) { // all killed first: one stopped in its transaction holds the database's lock
                if (members.stream().anyMatch(o -> !crashed.contains(o))) {
                    killsBesideOthers++;
                }
                m.child.kill9();
                kills++;
            }
            for (Member m : crashed) {
                m.next(); // the others go on consuming while it starts again
            }
            Thread.sleep(100);
        }
        return to;
    }

    /** A member started with its crash points in turn, then none. */
    private Member start(String name, String... points) throws IOException {
        Member m = new Member(name, new ArrayDeque<>(List.of(points)));
        m.next();
        members.add(m);
        return m;
    }

    private final class Member {
        final String name;
        final Deque<String> points;
        String point = "none";
        CrashFixture.Child child;
        CompletableFuture<String> report;

        Member(String name, Deque<String> points) {
            this.name = name;
            this.points = points;
        }

        /** Starts the member's process with its next crash point, reached after 1 to 120 records (retry copies: 1 to 6). */
        void next() throws IOException {
            point = points.isEmpty() ? "none" : points.poll();
            int at = point.equals("none") ? 0 : 1 + random.nextInt(point.equals("after-produce") ? 6 : 120);
            child = CrashFixture.Child.start(CrashConsumerProcess.class, topic, db.toString(), "inbox", point,
                    String.valueOf(at), name);
            starts++;
            CrashFixture.Child running = child;
            report = CompletableFuture.supplyAsync(() -> {
                try {
                    return String.valueOf(running.nextReport(deadline));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, readers);
        }
    }
}
