package dev.stagger.testsupport.kafka;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A Kafka broker node of a test's own, for tests that stop and restart it: started with
 * {@code kafka-broker.sh} on free loopback ports (the broker's and, one above, its controller's)
 * with its own data directory, deleted on {@link #close()}. Data survives {@link #stop()} and
 * {@link #start()}, as on a real restart. The script is stagger-kafka's, found from the module's
 * directory ({@code basedir}, else the working directory) or the repository root above it.
 *
 * <p>Not final: stagger-kafka's tests use it under their package's name ({@code DedicatedKafka}).
 */
public class DedicatedKafka implements AutoCloseable {
    private final Path script;
    private final Path dir;
    private final int port;

    /** A node on free ports, not started yet. */
    protected DedicatedKafka() throws IOException {
        this.script = script();
        this.dir = Files.createTempDirectory("stagger-kafka-node");
        this.port = freePortPair();
    }

    /** A node on free ports, not started yet. */
    public static DedicatedKafka create() throws IOException {
        return new DedicatedKafka();
    }

    private static Path script() {
        Path base = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();
        for (Path d = base; d != null; d = d.getParent()) {
            for (Path candidate : List.of(d.resolve("kafka-broker.sh"), d.resolve("stagger-kafka/kafka-broker.sh"))) {
                if (Files.isRegularFile(candidate)) {
                    return candidate;
                }
            }
        }
        throw new IllegalStateException("stagger-kafka/kafka-broker.sh not found above " + base);
    }

    /** A port p with p + 1 free too (the controller's), both on loopback. */
    private static int freePortPair() throws IOException {
        for (int tries = 0; tries < 50; tries++) {
            try (ServerSocket a = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                int p = a.getLocalPort();
                if (p < 65_535) {
                    try (ServerSocket b = new ServerSocket(p + 1, 1, java.net.InetAddress.getLoopbackAddress())) {
                        return p;
                    } catch (IOException taken) {
                        // try another pair
                    }
                }
            }
        }
        throw new IOException("no free pair of loopback ports found");
    }

    public String bootstrap() {
        return "127.0.0.1:" + port;
    }

    public Map<String, Object> config() {
        return Map.of("bootstrap.servers", bootstrap());
    }

    public void start() throws IOException, InterruptedException {
        run("start");
    }

    public void stop() throws IOException, InterruptedException {
        run("stop");
    }

    private void run(String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of("bash", script.toString(), command, "--port", Integer.toString(port),
                "--dir", dir.toString())).redirectErrorStream(true).start();
        String out;
        try (var in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!p.waitFor(180, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("kafka-broker.sh " + command + " failed: " + out);
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        try {
            stop();
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }
}
