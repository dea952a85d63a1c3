package dev.stagger.testsupport.rabbitmq;

import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.Services;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A RabbitMQ node of the test's own, on free ports, with its data and logs under {@code target/}:
 * a test may stop and start it without touching the shared broker on 5672. Needs
 * {@code rabbitmq-server} and {@code rabbitmqctl} on the PATH; without them the test is skipped
 * with a message (failed under {@code CI=true}).
 */
public final class DedicatedBroker implements AutoCloseable {
    private final String node;
    private final int port;
    private final Path dir;
    private final Map<String, String> env;

    private DedicatedBroker(String node, int port, Path dir, Map<String, String> env) {
        this.node = node;
        this.port = port;
        this.dir = dir;
        this.env = env;
    }

    public static DedicatedBroker start() throws Exception {
        Services.require("RabbitMQ", onPath("rabbitmq-server") && onPath("rabbitmqctl"),
                "rabbitmq-server is not on the PATH; install RabbitMQ (apt-get install rabbitmq-server) to run this test");
        int port = freePort();
        int distPort = freePort();
        String node = "stagger-test-" + ProcessHandle.current().pid() + "-" + port + "@localhost";
        Path dir = Path.of("target", "rabbitmq-" + port).toAbsolutePath();
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("rabbitmq.conf"), "listeners.tcp.local = 127.0.0.1:" + port + "\n");
        Files.writeString(dir.resolve("enabled_plugins"), "[].\n");
        openUp(dir); // the server runs as the rabbitmq user when started by root
        Map<String, String> env = Map.of(
                "RABBITMQ_NODENAME", node,
                "RABBITMQ_NODE_PORT", String.valueOf(port),
                "RABBITMQ_DIST_PORT", String.valueOf(distPort),
                "RABBITMQ_CONFIG_FILE", dir.resolve("rabbitmq.conf").toString(),
                "RABBITMQ_ENABLED_PLUGINS_FILE", dir.resolve("enabled_plugins").toString(),
                "RABBITMQ_MNESIA_BASE", dir.resolve("mnesia").toString(),
                "RABBITMQ_LOG_BASE", dir.resolve("log").toString(),
                "RABBITMQ_PID_FILE", dir.resolve("node.pid").toString());
        DedicatedBroker broker = new DedicatedBroker(node, port, dir, env);
        broker.run(60, "rabbitmq-server", "-detached");
        broker.awaitPort(true, 90);
        return broker;
    }

    public int port() {
        return port;
    }

    /** Stops the RabbitMQ application (every connection drops; durable queues and persistent messages stay on disk). */
    public void stopApp() throws Exception {
        run(60, "rabbitmqctl", "-n", node, "stop_app");
        awaitPort(false, 30);
    }

    /** Starts the application again, recovering the queues from disk. */
    public void startApp() throws Exception {
        run(60, "rabbitmqctl", "-n", node, "start_app");
        awaitPort(true, 60);
    }

    @Override
    public void close() throws Exception {
        run(60, "rabbitmqctl", "-n", node, "stop");
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    private void run(int timeoutSeconds, String... command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("commands.log").toFile().exists()
                        ? ProcessBuilder.Redirect.appendTo(dir.resolve("commands.log").toFile())
                        : ProcessBuilder.Redirect.to(dir.resolve("commands.log").toFile()));
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
        }
        if (p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed with " + p.exitValue() + "; see " + dir.resolve("commands.log"));
        }
    }

    private void awaitPort(boolean open, int seconds) {
        Await.until("node " + node + " port " + port + (open ? " to open" : " to close") + " (logs in " + dir.resolve("log")
                + ")", Duration.ofSeconds(seconds), Duration.ofMillis(200), () -> listening() == open);
    }

    private boolean listening() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void openUp(Path dir) throws IOException {
        List<Path> chain = new ArrayList<>();
        for (Path p = dir; p != null && p.startsWith(Path.of("target").toAbsolutePath()); p = p.getParent()) {
            chain.add(p);
        }
        for (Path p : chain) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxrwxrwx"));
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-rw-rw-"));
            }
        }
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, command))) {
                return true;
            }
        }
        return false;
    }
}
