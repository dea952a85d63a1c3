package dev.stagger.jobs.internal;

import dev.stagger.Clock;
import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import org.jspecify.annotations.Nullable;

/**
 * Binds a statement's parameters in order. {@link #now()} binds the store clock's time where the
 * SQL has a parameter for it and nothing where the SQL reads the database's clock instead, so one
 * sequence of calls serves both (see {@link JobTables#now}). The clock is read once per binder.
 */
public final class Binder {
    private final PreparedStatement ps;
    private final boolean bindNow;
    private final long nowMillis;
    private int index = 1;

    public Binder(PreparedStatement ps, JobTables tables, Clock clock) {
        this.ps = ps;
        this.bindNow = !tables.databaseClock();
        this.nowMillis = bindNow ? clock.currentTimeMillis() : 0;
    }

    /** Starts binding {@code ps} again from the first parameter (for the next row of a batch, say). */
    public Binder reset() {
        index = 1;
        return this;
    }

    public Binder now() throws SQLException {
        if (bindNow) {
            ps.setLong(index++, nowMillis);
        }
        return this;
    }

    public Binder bigint(long value) throws SQLException {
        ps.setLong(index++, value);
        return this;
    }

    public Binder nullableBigint(@Nullable Long value) throws SQLException {
        if (value == null) {
            ps.setNull(index++, Types.BIGINT);
        } else {
            ps.setLong(index++, value);
        }
        return this;
    }

    public Binder integer(int value) throws SQLException {
        ps.setInt(index++, value);
        return this;
    }

    public Binder text(@Nullable String value) throws SQLException {
        if (value == null) {
            ps.setNull(index++, Types.VARCHAR);
        } else {
            ps.setString(index++, value);
        }
        return this;
    }

    public Binder array(Array value) throws SQLException {
        ps.setArray(index++, value);
        return this;
    }

    public Binder bytes(byte[] value) throws SQLException {
        ps.setBytes(index++, value);
        return this;
    }
}
