package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.internal.SimpleDataSource;
import dev.stagger.testing.VirtualClock;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rescue and a purge read and then write in one transaction. On SQLite (WAL) a transaction that
 * began by reading cannot write once another connection has committed since its read: it fails
 * at once with {@code SQLITE_BUSY_SNAPSHOT}, which no busy timeout waits out. Both must hold the
 * write lock from their first statement instead, so another writer waits for them (here, with no
 * busy timeout, is refused) rather than failing them. The other writer is fired by the connection
 * just before the transaction's first statement that changes rows: between its read and its write.
 */
class SqliteReadThenWriteTest {
    @TempDir
    Path dir;
    final VirtualClock clock = new VirtualClock();
    /** What the other writer met each time it tried: "committed" or the error it got. */
    final List<String> otherWriter = new CopyOnWriteArrayList<>();
    volatile boolean armed;
    DataSource plain;
    JobQueue jobs;

    @BeforeEach
    void setUp() throws Exception {
        plain = SqliteDataSource.file(dir.resolve("jobs.db"));
        Stores.exec(plain, "CREATE TABLE elsewhere (x INTEGER)");
        DataSource interrupted = new SimpleDataSource() {
            @Override
            public Connection getConnection() throws SQLException {
                return interruptedBeforeItsFirstWrite(plain.getConnection());
            }
        };
        jobs = JobQueue.builder(interrupted).clock(clock).build();
    }

    /**
     * {@code c}, on which, while {@link #armed}, the first statement executed to change rows
     * lets another connection commit first.
     */
    private Connection interruptedBeforeItsFirstWrite(Connection c) {
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    Object result = call(c, method, args);
                    if (method.getName().equals("createStatement")) {
                        return firingBeforeAWrite((Statement) result, Statement.class, null);
                    }
                    if (method.getName().equals("prepareStatement") && args[0] instanceof String sql) {
                        return firingBeforeAWrite((Statement) result, PreparedStatement.class, sql);
                    }
                    return result;
                });
    }

    private Statement firingBeforeAWrite(Statement s, Class<? extends Statement> type, String preparedSql) {
        return (Statement) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type},
                (proxy, method, args) -> {
                    String sql = args != null && args.length > 0 && args[0] instanceof String given ? given : preparedSql;
                    if (method.getName().startsWith("execute") && sql != null && armed
                            && (sql.startsWith("UPDATE") || sql.startsWith("DELETE"))) {
                        armed = false;
                        anotherWriterCommits();
                    }
                    return call(s, method, args);
                });
    }

    private static Object call(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private void anotherWriterCommits() {
        try {
            Stores.exec(SqliteDataSource.file(dir.resolve("jobs.db"), Duration.ZERO), "INSERT INTO elsewhere VALUES (1)");
            otherWriter.add("committed");
        } catch (SQLException e) {
            otherWriter.add(e.getMessage());
        }
    }

    @Test
    void aRescueHoldsTheWriteLockFromItsRead() throws Exception {
        long id = jobs.enqueue("q", "t", "x");
        Stores.abandon(plain, id, 1, "dead-worker", clock.currentTimeMillis(), Duration.ofMillis(-1));
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("other type", ctx -> { }).build();

        armed = true;
        pool.runAvailable();

        assertThat(otherWriter).singleElement().asString().startsWith("[SQLITE_BUSY]");
        assertThat(jobs.admin().find(id).orElseThrow().state()).as("rescued").isEqualTo(JobState.AVAILABLE);
        assertThat(jobs.admin().errors(id)).singleElement()
                .satisfies(e -> assertThat(e.exceptionClass()).isEqualTo(JobError.LEASE_EXPIRED));
    }

    @Test
    void aPurgeHoldsTheWriteLockFromItsRead() throws Exception {
        long id = jobs.enqueue("q", "t", "x");
        WorkerPool.builder(jobs, "q").handler("t", ctx -> { }).build().runAvailable();
        clock.advance(Duration.ofHours(2));

        armed = true;
        int purged = jobs.admin().purge(JobState.SUCCEEDED, Duration.ofHours(1), "q");

        assertThat(otherWriter).singleElement().asString().startsWith("[SQLITE_BUSY]");
        assertThat(purged).isEqualTo(1);
        assertThat(jobs.admin().find(id)).isEmpty();
    }
}
