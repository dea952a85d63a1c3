package dev.stagger.jobs.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The pool's listener thread on PostgreSQL: LISTENs on the store's NOTIFY channel and wakes the
 * fetcher when a job for its queue is enqueued (at the enqueuer's commit, from any process). A
 * lost connection is reopened by the {@link ReconnectingLoop}; meanwhile the pool falls back to
 * polling. Only loaded on PostgreSQL, so the driver stays an optional dependency.
 */
public final class PgWakeups implements ReconnectingLoop.Step {
    private final String channel;
    private final String queue;
    private final Runnable wake;
    private final int waitMillis;
    @SuppressWarnings("NullAway.Init") // set by connected(), which the reconnecting loop calls before run()
    private PGConnection pg;

    /** @param waitMillis how long one wait for notifications lasts before the pool's state is checked again */
    public PgWakeups(String channel, String queue, Runnable wake, int waitMillis) {
        this.channel = channel;
        this.queue = queue;
        this.wake = wake;
        this.waitMillis = waitMillis;
    }

    @Override
    public void connected(Connection c) throws SQLException {
        if (!c.getAutoCommit()) {
            c.setAutoCommit(true); // LISTEN takes effect only once committed
        }
        try (Statement s = c.createStatement()) {
            s.execute("LISTEN " + channel);
        }
        pg = c.unwrap(PGConnection.class);
        wake.run(); // jobs may have arrived while we were not listening
    }

    @Override
    public void run(Connection c) throws SQLException {
        PGNotification[] batch = pg.getNotifications(waitMillis);
        if (batch == null) {
            return;
        }
        for (PGNotification n : batch) {
            if (queue.equals(n.getParameter())) {
                wake.run();
                return;
            }
        }
    }
}
