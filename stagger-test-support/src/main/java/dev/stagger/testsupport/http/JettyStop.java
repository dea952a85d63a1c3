package dev.stagger.testsupport.http;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.server.Server;

/**
 * Stops a test's Jetty server, waiting 10 s at most. Jetty's stop waits without a bound for its
 * selector to take the stop, and once in several hundred stops it did not (seen in a loop of 350);
 * such a server is left to a daemon thread and a line on stderr says so, instead of the test
 * hanging until the build's time limit. The tests' Jetty servers stop through here (not the
 * overload harness's {@code LoopbackServer}, which the benchmarks run without this module).
 */
public final class JettyStop {
    private JettyStop() {
    }

    /** Stops {@code server}; what its stop threw is thrown here, a stop that does not end is abandoned. */
    public static void stop(Server server) throws Exception {
        AtomicReference<Exception> failure = new AtomicReference<>();
        Thread stopper = new Thread(() -> {
            try {
                server.stop();
            } catch (Exception e) {
                failure.set(e);
            }
        }, "jetty-stop");
        stopper.setDaemon(true);
        stopper.start();
        stopper.join(TimeUnit.SECONDS.toMillis(10));
        if (stopper.isAlive()) {
            System.err.println("JettyStop: Jetty's stop did not end within 10 s; left to a daemon thread");
            return;
        }
        if (failure.get() != null) {
            throw failure.get();
        }
    }
}
