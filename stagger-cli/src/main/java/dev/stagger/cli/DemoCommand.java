package dev.stagger.cli;

import dev.stagger.cli.demo.DemoServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
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

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to bind (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--data-dir", description = "Where the demo keeps its SQLite files, kept on exit (default: a new temporary directory, removed on exit).")
    @Nullable Path dataDir;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) {
            System.err.println("stagger demo: --port must be in [0, 65535], got " + port);
            return 2;
        }
        Path dir;
        try {
            dir = dataDir != null ? FileProblems.createDirectories(dataDir) : Files.createTempDirectory("stagger-demo");
        } catch (IOException e) {
            System.err.println("stagger demo: cannot use " + (dataDir != null ? "--data-dir " + dataDir
                    : "a temporary directory") + ": " + reasonAfterPath(e));
            return 1;
        }
        // a temporary directory is the demo's own: removed however the demo ends (Ctrl-C and SIGTERM included)
        Cleanup cleanup = new Cleanup(dataDir == null ? dir : null);
        Thread hook = new Thread(cleanup, "stagger-demo-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            try {
                cleanup.server = DemoServer.start(host, port, dir);
            } catch (IOException | SQLException e) {
                // a port in use or a data dir that is a file: one line, not a stack trace
                System.err.println("stagger demo: cannot start on " + host + ":" + port
                        + (dataDir != null ? " with --data-dir " + dataDir : "") + ": " + describe(e));
                return 1;
            }
            String shown = host.equals("0.0.0.0") ? "localhost" : host;
            System.out.println("Stagger demo running at http://" + shown + ":" + cleanup.server.port() + "/  (data in " + dir
                    + (dataDir == null ? ", removed on exit" : "") + "; Ctrl-C to stop)");
            System.out.flush();
            cleanup.server.join();
            return 0;
        } finally {
            cleanup.run();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or has run: nothing left to remove
            }
        }
    }

    /** Stops the server, then removes the temporary data directory; runs once, from the hook or the command. */
    private static final class Cleanup implements Runnable {
        private final @Nullable Path temporary;
        private final AtomicBoolean done = new AtomicBoolean();
        volatile @Nullable DemoServer server;

        Cleanup(@Nullable Path temporary) {
            this.temporary = temporary;
        }

        @Override
        public void run() {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            try {
                if (server != null) {
                    server.close();
                }
            } catch (Exception e) {
                System.err.println("stagger demo: stopping: " + describe(e));
            } finally {
                if (temporary != null) {
                    deleteTree(temporary);
                }
            }
        }

        private static void deleteTree(Path root) {
            try (Stream<Path> paths = Files.walk(root)) {
                for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            } catch (IOException | UncheckedIOException e) {
                System.err.println("stagger demo: could not remove " + root + ": " + e.getMessage());
            }
        }
    }

    /** The reason of a {@link FileProblems#createDirectories} failure, without repeating the path first. */
    private static String reasonAfterPath(IOException e) {
        String message = String.valueOf(e.getMessage());
        int colon = message.indexOf(": ");
        return colon >= 0 ? message.substring(colon + 2) : message;
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
