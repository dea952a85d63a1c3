package dev.stagger.jobs.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Listens on the store's NOTIFY channel and wakes an idle pool when a job for its queue is
 * enqueued. A lost connection is reopened after a pause; meanwhile the pool falls back to polling.
 * Only loaded on PostgreSQL, so the driver stays an optional dependency.
 */
public final class PgWakeups implements Runnable {
    private final DataSource dataSource;
    private final String channel;
    private final String queue;
    private final Runnable wake;
    private final PoolSignals signals;
    private final int waitMillis;

    public PgWakeups(DataSource dataSource, String channel, String queue, Runnable wake, PoolSignals signals,
                     int waitMillis) {
        this.dataSource = dataSource;
        this.channel = channel;
        this.queue = queue;
        this.wake = wake;
        this.signals = signals;
        this.waitMillis = waitMillis;
    }

    @Override
    public void run() {
        PoolSignals.Reconnect reconnect = signals.reconnect();
        while (signals.claiming()) {
            try (Connection c = dataSource.getConnection()) {
                if (!c.getAutoCommit()) {
                    c.setAutoCommit(true); // LISTEN takes effect only once committed
                }
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + channel);
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                reconnect.succeeded();
                wake.run(); // jobs may have arrived while we were not listening
                while (signals.claiming()) {
                    PGNotification[] batch = pg.getNotifications(waitMillis);
                    if (batch == null) {
                        continue;
                    }
                    for (PGNotification n : batch) {
                        if (queue.equals(n.getParameter())) {
                            wake.run();
                            break;
                        }
                    }
                }
            } catch (SQLException e) {
                reconnect.pauseAfter(e);
            }
        }
    }
}
