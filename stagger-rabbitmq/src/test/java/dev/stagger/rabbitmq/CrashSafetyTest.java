package dev.stagger.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Connection;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testsupport.jdbc.TestDatabases;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Consumers in separate JVMs killed with {@code kill -9} while handling messages, between a
 * retry's confirmed republish and the original's acknowledgement, and while a retry made in place
 * waits (the original unacknowledged, no copy published). Every message must take effect
 * (0 lost); with the inbox, exactly once (0 duplicate effects); without it, the duplicates are
 * counted and printed. The effects and the inbox are in SQLite, and, for the inbox run, in
 * PostgreSQL as well (tables unique to the run, dropped after it).
 *
 * <p>The message count is {@code -Dstagger.crash.messages}, default 10,000 (the figure in the
 * README was obtained with it); {@code -Dstagger.crash.kills} sets the kills per run (default 8).
 */
class CrashSafetyTest {
    private static final int MESSAGES = Integer.getInteger("stagger.crash.messages", 10_000);
    private static final int KILLS = Integer.getInteger("stagger.crash.kills", 8);
    private static final List<String> POINTS = List.of("before-commit", "after-commit", "after-republish", "in-place-wait");
    private static final Duration RUN_LIMIT = Duration.ofSeconds(120);

    @TempDir
    Path dir;
    private Connection connection;
    private String queue;
    private Process child;

    @BeforeEach
    void connect() {
        connection = TestBroker.connect();
        queue = TestBroker.uniqueQueue("crash");
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (child != null && child.isAlive()) {
            child.destroyForcibly().waitFor();
        }
        TestBroker.deleteQueues(connection, queue, queue + ".stagger.delay-10ms", queue + ".stagger.delay-100ms",
                queue + ".stagger.dead");
        connection.close();
    }

    @Test
    void withTheInboxNoMessageIsLostAndNoneTakesEffectTwice() throws Exception {
        Counts counts = run("inbox");
        System.out.printf("crash safety with the inbox: %d messages, %d kills, %d lost, %d duplicate effects%n",
                MESSAGES, KILLS, counts.lost, counts.duplicates);
        assertThat(counts.lost).isZero();
        assertThat(counts.duplicates).isZero();
    }

    @Test
    void withTheInboxOnPostgresqlNoMessageIsLostAndNoneTakesEffectTwice() throws Exception {
        DataSource pg = TestDatabases.postgres();
        String db = "postgresql:" + ProcessHandle.current().pid() + "_" + Long.toHexString(System.nanoTime());
        String effects = CrashConsumerProcess.effectsTable(db);
        try {
            execute(pg, "CREATE TABLE " + effects + " (message_id TEXT NOT NULL, pid BIGINT NOT NULL)");
            Counts counts = run("inbox", pg, db, effects);
            System.out.printf("crash safety with the inbox on PostgreSQL: %d messages, %d kills, %d lost, %d duplicate"
                    + " effects%n", MESSAGES, KILLS, counts.lost, counts.duplicates);
            assertThat(counts.lost).isZero();
            assertThat(counts.duplicates).isZero();
        } finally {
            if (child != null && child.isAlive()) {
                child.destroyForcibly().waitFor(); // before its tables go
            }
            execute(pg, "DROP TABLE IF EXISTS " + effects);
            execute(pg, "DROP TABLE IF EXISTS " + CrashConsumerProcess.inboxPrefix(db) + "inbox");
            execute(pg, "DROP TABLE IF EXISTS " + CrashConsumerProcess.inboxPrefix(db) + "schema_version");
        }
    }

    @Test
    void withoutTheInboxNoMessageIsLostAndTheDuplicatesAreCounted() throws Exception {
        Counts counts = run("plain");
        System.out.printf("crash safety without the inbox: %d messages, %d kills, %d lost, %d duplicate effects%n",
                MESSAGES, KILLS, counts.lost, counts.duplicates);
        assertThat(counts.lost).isZero();
        // a kill after the effect's commit and before the acknowledgement repeats the effect
        assertThat(counts.duplicates).isPositive();
    }

    private record Counts(long lost, long duplicates) {
    }

    /** A run on SQLite: a file of the test's, table {@code effects}. */
    private Counts run(String mode) throws Exception {
        Path db = dir.resolve("effects.db");
        SqliteDataSource ds = SqliteDataSource.file(db);
        execute(ds, "CREATE TABLE effects (message_id TEXT NOT NULL, pid INTEGER NOT NULL)");
        return run(mode, ds, db.toString(), "effects");
    }

    /**
     * @param db the consumer process's DB argument (see {@link CrashConsumerProcess})
     * @param effects the table in {@code ds} where the effects land
     */
    private Counts run(String mode, DataSource ds, String db, String effects) throws Exception {
        TestBroker.publishPersistent(connection, queue, MESSAGES);

        long deadline = System.nanoTime() + RUN_LIMIT.toNanos();
        Random random = new Random(20);
        int kills = 0;
        for (int k = 0; k < KILLS; k++) {
            String point = POINTS.get(k % POINTS.size());
            // retried messages are a tenth of all: their crash points come a tenth as often
            boolean retryPoint = point.equals("after-republish") || point.equals("in-place-wait");
            int bound = Math.max(2, MESSAGES / KILLS / (retryPoint ? 20 : 2));
            int at = 1 + random.nextInt(bound);
            child = start(db, mode, point, at);
            BufferedReader out = reader(child);
            String line = readLine(out, deadline);
            if ("crash-point".equals(line)) {
                new ProcessBuilder("kill", "-9", String.valueOf(child.pid())).inheritIO().start().waitFor();
                child.waitFor(30, TimeUnit.SECONDS);
                kills++;
            } else {
                child.destroyForcibly().waitFor(); // everything was done before the crash point
            }
        }
        child = start(db, mode, "none", 0);
        long done = 0;
        while (System.nanoTime() < deadline) {
            done = distinctEffects(ds, effects);
            if (done == MESSAGES && TestBroker.messageCount(connection, queue) == 0
                    && TestBroker.messageCount(connection, queue + ".stagger.delay-10ms") == 0
                    && TestBroker.messageCount(connection, queue + ".stagger.delay-100ms") == 0) {
                break;
            }
            Thread.sleep(100);
        }
        child.destroy(); // SIGTERM: the consumer closes gracefully and acknowledges what it finished
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("consumer exited").isTrue();
        assertThat(kills).as("processes killed at a crash point").isGreaterThanOrEqualTo(KILLS - 1);
        assertThat(TestBroker.messageCount(connection, queue + ".stagger.dead")).as("dead letters").isZero();
        assertThat(TestBroker.messageCount(connection, queue)).as("left in the work queue").isZero();
        long all = scalar(ds, "SELECT COUNT(*) FROM " + effects);
        done = distinctEffects(ds, effects);
        return new Counts(MESSAGES - done, all - done);
    }

    private Process start(String db, String mode, String point, int at) throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), CrashConsumerProcess.class.getName(), queue, db, mode,
                point, String.valueOf(at)).redirectErrorStream(true).start();
        String line = readLine(reader(p), System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
        assertThat(line).as("consumer process started").isEqualTo("ready");
        return p;
    }

    private final java.util.Map<Process, BufferedReader> readers = new java.util.IdentityHashMap<>();

    private BufferedReader reader(Process p) {
        return readers.computeIfAbsent(p, x -> new BufferedReader(new InputStreamReader(x.getInputStream(), StandardCharsets.UTF_8)));
    }

    /** The next line that is "ready" or "crash-point" (skipping anything else the JVM prints), or null at the end. */
    private static String readLine(BufferedReader out, long deadlineNanos) throws Exception {
        while (System.nanoTime() < deadlineNanos) {
            String line = out.readLine();
            if (line == null || line.equals("ready") || line.equals("crash-point")) {
                return line;
            }
        }
        throw new AssertionError("the consumer process did not report in time");
    }

    private static long distinctEffects(DataSource ds, String effects) throws SQLException {
        return scalar(ds, "SELECT COUNT(DISTINCT message_id) FROM " + effects);
    }

    private static void execute(DataSource ds, String sql) throws SQLException {
        try (java.sql.Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static long scalar(DataSource ds, String sql) throws SQLException {
        try (java.sql.Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
