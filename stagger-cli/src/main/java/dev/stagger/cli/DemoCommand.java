package dev.stagger.cli;

import dev.stagger.cli.demo.DemoServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Starts the demo web page. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Start the demo web page: watch backoff, jitter, budgets, breakers, idempotency keys and dead letters work.",
                "", "Example: stagger demo --port 8080"})
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
        Path dir = dataDir != null ? Files.createDirectories(dataDir) : Files.createTempDirectory("stagger-demo");
        try (DemoServer server = DemoServer.start(host, port, dir)) {
            String shown = host.equals("0.0.0.0") ? "localhost" : host;
            System.out.println("Stagger demo running at http://" + shown + ":" + server.port() + "/  (data in " + dir + "; Ctrl-C to stop)");
            server.join();
        }
        return 0;
    }
}
