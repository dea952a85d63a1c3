package dev.stagger.testsupport.jdbc;

import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.Services;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * A PostgreSQL server of a test's own, to stop, start and restart at will: a new cluster
 * ({@code initdb}) in a directory under {@code target/}, listening on 127.0.0.1 on a free port,
 * with trust authentication for the user {@code postgres}. Never the shared server on 5432.
 *
 * <p>The binaries are found under {@code /usr/lib/postgresql/<version>/bin} (the newest), or in
 * {@code STAGGER_PG_BIN}. Where they are absent the test is skipped with a message saying so,
 * except under {@code CI=true}, where it fails. {@code initdb} refuses to run as root, so when
 * the tests run as root every server command runs as the {@code postgres} user
 * ({@code runuser -u postgres}), which then owns the directory.
 *
 * <p>{@link #close()} stops the server at once and deletes the directory; a shutdown hook does
 * the same if a test forgets. Not thread-safe: one test drives its cluster.
 */
public final class PostgresCluster implements AutoCloseable {
    private static final long TIMEOUT_SECONDS = 60;

    private final Path bin;
    private final Path dir;
    private final Path data;
    private final boolean asPostgresUser;
    private final Thread cleanup;
    private int port;
    private boolean running;

    private PostgresCluster(Path bin, Path dir, boolean asPostgresUser) {
        this.bin = bin;
        this.dir = dir;
        this.data = dir.resolve("data");
        this.asPostgresUser = asPostgresUser;
        this.cleanup = new Thread(this::stopAndDeleteQuietly, "postgres-cluster-cleanup");
    }

    /**
     * Creates and starts a cluster in a new directory under {@code parent} (a folder of
     * {@code target/}), or skips the test (fails it under {@code CI=true}) when the PostgreSQL
     * server binaries are not installed.
     */
    public static PostgresCluster start(Path parent) throws IOException, InterruptedException {
        Optional<Path> bin = binaries();
        Services.require("the PostgreSQL server binaries", bin.isPresent(),
                "PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/*/bin;"
                        + " install the server package or set STAGGER_PG_BIN to run this test");
        boolean root = "root".equals(System.getProperty("user.name"));
        Files.createDirectories(parent);
        Path dir = Files.createTempDirectory(parent.toAbsolutePath(), "pg-cluster-");
        PostgresCluster cluster = new PostgresCluster(bin.get(), dir, root);
        Runtime.getRuntime().addShutdownHook(cluster.cleanup);
        try {
            if (root) {
                run(List.of("chown", "postgres:", dir.toString()), dir.resolve("chown.log"));
            }
            cluster.server(List.of(bin.get().resolve("initdb").toString(), "-D", cluster.data.toString(), "-U", "postgres",
                    "--auth=trust", "-E", "UTF8", "--no-sync"), "initdb.log");
            cluster.startOnFreePort();
            return cluster;
        } catch (IOException | RuntimeException | InterruptedException e) {
            cluster.close();
            throw e;
        }
    }

    private static Optional<Path> binaries() throws IOException {
        String configured = System.getenv("STAGGER_PG_BIN");
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured);
            return Files.isExecutable(p.resolve("initdb")) ? Optional.of(p) : Optional.empty();
        }
        Path root = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(root)) {
            return versions.map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("pg_ctl")))
                    .max(Comparator.comparingInt(PostgresCluster::majorVersion));
        }
    }

    private static int majorVersion(Path bin) {
        try {
            return Integer.parseInt(bin.getParent().getFileName().toString().replaceAll("[^0-9].*", ""));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private void startOnFreePort() throws IOException, InterruptedException {
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = probe.getLocalPort();
            }
            try {
                start();
                return;
            } catch (IOException e) {
                last = e; // the port was taken between the probe and the start: try another
            }
        }
        throw last;
    }

    /** Starts the stopped server on its port and waits until it accepts connections. */
    public void start() throws IOException, InterruptedException {
        server(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-l", dir.resolve("server.log").toString(),
                "-w", "-t", Long.toString(TIMEOUT_SECONDS), "-o",
                "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60",
                "start"), "pg_ctl-start.log");
        running = true;
    }

    /** Stops the server: {@code fast} closes sessions and shuts down cleanly; {@code immediate} is a crash. */
    public void stop(boolean immediate) throws IOException, InterruptedException {
        server(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-w", "-t",
                Long.toString(TIMEOUT_SECONDS), "-m", immediate ? "immediate" : "fast", "stop"), "pg_ctl-stop.log");
        running = false;
    }

    /** A clean stop ({@code -m fast}). */
    public void stop() throws IOException, InterruptedException {
        stop(false);
    }

    /** Stops (cleanly) and starts again on the same port. */
    public void restart() throws IOException, InterruptedException {
        stop();
        start();
    }

    public boolean running() {
        return running;
    }

    public int port() {
        return port;
    }

    /** The JDBC URL of the database {@code postgres}, with {@code extra} parameters appended (e.g. {@code connectTimeout=2}). */
    public String url(String... extra) {
        StringBuilder url = new StringBuilder("jdbc:postgresql://127.0.0.1:" + port + "/postgres");
        for (int i = 0; i < extra.length; i++) {
            url.append(i == 0 ? '?' : '&').append(extra[i]);
        }
        return url.toString();
    }

    /** A connection per call to the database {@code postgres} as {@code postgres}. */
    public TestDataSource dataSource(String... extraUrlParameters) {
        return new TestDataSource(url(extraUrlParameters), "postgres", "");
    }

    /** Waits until a connection succeeds again, for at most {@code timeoutMillis}. */
    public boolean awaitAccepting(long timeoutMillis) {
        DataSource ds = dataSource("connectTimeout=2");
        return Await.within(Duration.ofMillis(timeoutMillis), () -> {
            try (Connection c = ds.getConnection()) {
                return c.isValid(2);
            } catch (SQLException notYet) {
                return false;
            }
        });
    }

    private void server(List<String> command, String logName) throws IOException, InterruptedException {
        List<String> full = new ArrayList<>();
        if (asPostgresUser) {
            full.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        full.addAll(command);
        run(full, dir.resolve(logName));
    }

    private static void run(List<String> command, Path log) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(TIMEOUT_SECONDS + 10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish within " + TIMEOUT_SECONDS + " s");
        }
        if (p.exitValue() != 0) {
            String output = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
            throw new IOException(String.join(" ", command) + " failed with exit code " + p.exitValue() + ": "
                    + output.substring(Math.max(0, output.length() - 2000)));
        }
    }

    private void stopAndDeleteQuietly() {
        try {
            if (running) {
                stop(true);
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            // the directory is deleted anyway; a server left behind would say so in its own log
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // best effort: it lives under target/, which the next clean removes
        }
    }

    /** Stops the server at once (if running) and deletes the cluster's directory. */
    @Override
    public void close() {
        stopAndDeleteQuietly();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or about to
        }
    }

    @Override
    public String toString() {
        return "PostgresCluster{127.0.0.1:" + port + ", " + dir + (running ? ", running" : ", stopped") + "}";
    }
}
