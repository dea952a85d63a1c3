package dev.stagger.jobs.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The prepared statements one pool thread keeps on its connection, so a statement it runs again
 * and again (the claim, the completions) is parsed and planned once per connection rather than
 * once per run: on SQLite compiling the claim costs about as much as running it. A new connection
 * (after a reconnect) starts an empty cache; closing a connection closes its statements. Used by
 * one thread.
 */
public final class Statements {
    private @Nullable Connection connection;
    private final Map<String, PreparedStatement> prepared = new HashMap<>();

    /** The statement for {@code sql} on {@code c}, prepared on first use on this connection. */
    public PreparedStatement on(Connection c, String sql) throws SQLException {
        if (c != connection) {
            prepared.clear(); // the old connection's statements went with it
            connection = c;
        }
        PreparedStatement ps = prepared.get(sql);
        if (ps == null || ps.isClosed()) {
            ps = c.prepareStatement(sql);
            prepared.put(sql, ps);
        }
        return ps;
    }
}
