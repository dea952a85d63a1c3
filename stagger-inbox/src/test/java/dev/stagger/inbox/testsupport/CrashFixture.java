package dev.stagger.inbox.testsupport;

import dev.stagger.inbox.Inbox;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * What the crash tests of the consumers (stagger-kafka's {@code CrashSafetyTest}) share: a consumer
 * process's effect written with or without the inbox in one transaction, with the crash points
 * around its commit; the crash point itself; and the test's side, starting a consumer in its own
 * JVM, reading what it reports and killing it with {@code kill -9}.
 */
public final class CrashFixture {
    private CrashFixture() {
    }

    /**
     * In the consumer process: stops the calling thread, after printing "crash-point", at the
     * {@code at}-th time it is reached, until the test kills the process. Thread-safe.
     */
    public static final class CrashPoint implements Runnable {
        private final int at;
        private final AtomicInteger reached = new AtomicInteger();

        public CrashPoint(int at) {
            this.at = at;
        }

        @Override
        public void run() {
            if (reached.incrementAndGet() == at) {
                System.out.println("crash-point");
                System.out.flush();
                try {
                    Thread.sleep(Long.MAX_VALUE); // until the test's kill -9
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * In the consumer process: writes the effect of message {@code id} (a row in {@code effects},
     * with this process's id) on {@code c}; with an {@code inbox}, only when the inbox records the
     * id, in one transaction ({@code inbox} null: the effect alone, committed at once). {@code point} runs at {@code crashPoint} {@code before-commit} (the
     * effect written, not committed) or {@code after-commit} (committed).
     */
    public static void applyEffect(Connection c, Inbox inbox, String effects, String id, String crashPoint, Runnable point)
            throws SQLException {
        boolean useInbox = inbox != null;
        c.setAutoCommit(!useInbox);
        try {
            if (inbox == null || inbox.record(c, id)) {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " (message_id, pid) VALUES (?, ?)")) {
                    ps.setString(1, id);
                    ps.setLong(2, ProcessHandle.current().pid());
                    ps.executeUpdate();
                }
            }
            if (crashPoint.equals("before-commit")) {
                point.run();
            }
            if (useInbox) {
                c.commit();
            }
        } catch (SQLException | RuntimeException e) {
            if (useInbox) {
                c.rollback();
            }
            throw e;
        }
        if (crashPoint.equals("after-commit")) {
            point.run();
        }
    }

    /** In the test: a consumer process, its output read line by line. */
    public static final class Child implements AutoCloseable {
        public final Process process;
        private final BufferedReader out;

        private Child(Process process) {
            this.process = process;
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        /**
         * Starts {@code main} with {@code args} in a JVM of its own (this JVM's class path, 128 MB)
         * and waits up to 60 s for it to print "ready".
         */
        public static Child start(Class<?> main, String... args) throws IOException {
            String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            List<String> command = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                    System.getProperty("java.class.path"), main.getName()));
            command.addAll(List.of(args));
            Child child = new Child(new ProcessBuilder(command).redirectErrorStream(true).start());
            String line = child.nextReport(System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
            if (!"ready".equals(line)) {
                child.close();
                throw new AssertionError("the consumer process did not start: it said " + line);
            }
            return child;
        }

        /** The next line that is "ready" or "crash-point" (skipping anything else the JVM prints), or null at its end. */
        public String nextReport(long deadlineNanos) throws IOException {
            while (System.nanoTime() < deadlineNanos) {
                String line = out.readLine();
                if (line == null || line.equals("ready") || line.equals("crash-point")) {
                    return line;
                }
            }
            throw new AssertionError("the consumer process did not report in time");
        }

        /** {@code kill -9}, and waits up to 30 s for the process to be gone. */
        public void kill9() throws IOException, InterruptedException {
            new ProcessBuilder("kill", "-9", String.valueOf(process.pid())).inheritIO().start().waitFor();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError("the killed process is still there");
            }
        }

        /** SIGTERM (a graceful close), and whether the process exited within 30 s. */
        public boolean terminate() throws InterruptedException {
            process.destroy();
            return process.waitFor(30, TimeUnit.SECONDS);
        }

        /** Kills the process if it is still there. */
        @Override
        public void close() {
            if (process.isAlive()) {
                try {
                    process.destroyForcibly().waitFor();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** The first column of the first row of {@code sql}. */
    public static long scalar(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    public static void execute(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
