package dev.stagger.cli;

import dev.stagger.cli.demo.DemoServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Starts the demo web page. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Start the demo web page: watch backoff, jitter, budgets, breakers, idempotency keys and dead letters work.",
                "", "Example: stagger demo --port 8080"},
        footerHeading = "%nExit codes:%n",
        footer = {"  0  stopped", "  1  could not start (port in use, data directory not usable)", "  2  bad arguments"})
final class DemoCommand implements Callable<Integer> {

    @Option(names = "--port", defaultValue = "8080", description = "Port to listen on (0 picks a free one; default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to bind (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--data-dir", description = "Where the demo keeps its SQLite files (default: a new temporary directory).")
    Path dataDir;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) {
            System.err.println("stagger demo: --port must be in [0, 65535], got " + port);
            return 2;
        }
        Path dir;
        DemoServer started;
        try {
            dir = dataDir != null ? Files.createDirectories(dataDir) : Files.createTempDirectory("stagger-demo");
            started = DemoServer.start(host, port, dir);
        } catch (IOException | SQLException e) {
            // a port in use or a data dir that is a file: one line, not a stack trace
            System.err.println("stagger demo: cannot start on " + host + ":" + port
                    + (dataDir != null ? " with --data-dir " + dataDir : "") + ": " + describe(e));
            return 1;
        }
        try (DemoServer server = started) {
            String shown = host.equals("0.0.0.0") ? "localhost" : host;
            System.out.println("Stagger demo running at http://" + shown + ":" + server.port() + "/  (data in " + dir + "; Ctrl-C to stop)");
            server.join();
        }
        return 0;
    }

    /** The message, and the root cause's when it adds something ("Failed to bind ...: Address already in use"). */
    private static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String text = String.valueOf(e.getMessage());
        if (root != e && root.getMessage() != null && !text.contains(root.getMessage())) {
            text += ": " + root.getMessage();
        }
        return text.replace('\n', ' ');
    }
}
