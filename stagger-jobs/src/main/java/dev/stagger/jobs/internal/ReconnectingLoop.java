package dev.stagger.jobs.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The one loop every pool thread runs: a step, again and again, on a database connection of the
 * thread's own, while the thread should run. After a failure the connection is closed, whatever
 * the step holds is given back, and the thread pauses on the reconnect schedule
 * ({@link PoolSignals.Reconnect}) before opening a new connection; every stored change is
 * conditional, so running a step again after a failure is harmless.
 */
public final class ReconnectingLoop implements Runnable {

    /** Where a thread's connection comes from. */
    @FunctionalInterface
    public interface Connections {
        Connection open() throws SQLException;
    }

    /** One thread's work. */
    public interface Step {
        /** A new connection is open (to LISTEN on it, say). */
        default void connected(Connection c) throws SQLException {
        }

        /** Does one round of work on {@code c}, waiting inside as it needs to. */
        void run(Connection c) throws SQLException, InterruptedException;

        /** The round failed: give back what it held. */
        default void failed() {
        }
    }

    private final Connections connections;
    private final PoolSignals signals;
    private final Pacer pacer;
    private final BooleanSupplier running;
    private final Step step;

    public ReconnectingLoop(Connections connections, PoolSignals signals, Pacer pacer, BooleanSupplier running, Step step) {
        this.connections = connections;
        this.signals = signals;
        this.pacer = pacer;
        this.running = running;
        this.step = step;
    }

    @Override
    public void run() {
        Connection c = null;
        PoolSignals.Reconnect reconnect = signals.reconnect(pacer);
        try {
            while (running.getAsBoolean()) {
                try {
                    if (c == null) {
                        c = connections.open();
                        step.connected(c);
                    }
                    step.run(c);
                    reconnect.succeeded();
                } catch (SQLException | RuntimeException e) {
                    step.failed();
                    c = closeQuietly(c);
                    if (running.getAsBoolean()) {
                        reconnect.pauseAfter(e);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeQuietly(c);
        }
    }

    private static @Nullable Connection closeQuietly(@Nullable Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // already broken
            }
        }
        return null;
    }
}
