package dev.stagger.jdbc.internal;

import dev.stagger.jdbc.Database;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/** The databases Stagger's stores know how to talk to. */
public enum Dialect {
    SQLITE,
    POSTGRESQL,
    MARIADB,
    H2,
    OTHER;

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    /** A table name, optionally qualified by its schema. */
    private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*\\.)?[A-Za-z_][A-Za-z0-9_]*");

    /** The dialect of a {@link Database} that the stores support. */
    public static Dialect of(Database database) {
        return valueOf(database.name());
    }

    /** Detects the dialect from the connection's metadata. */
    public static Dialect of(Connection connection) throws SQLException {
        String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
        if (product.contains("sqlite")) {
            return SQLITE;
        }
        if (product.contains("postgres")) {
            return POSTGRESQL;
        }
        if (product.contains("mariadb") || product.contains("mysql")) {
            return MARIADB;
        }
        if (product.contains("h2")) {
            return H2;
        }
        return OTHER;
    }

    /** Detects the dialect of a data source (borrows one connection). */
    public static Dialect of(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return of(c);
        }
    }

    /** True when the database supports {@code SELECT ... FOR UPDATE SKIP LOCKED}. */
    public boolean supportsSkipLocked() {
        return this == POSTGRESQL || this == MARIADB;
    }

    /**
     * An {@code INSERT} of {@code columns} (one {@code ?} each, in order) that does nothing when a
     * row with the same {@code keyColumns} exists: the usual way for concurrent writers to
     * create a row once without a failed statement aborting their transaction. Check
     * {@code executeUpdate()}: 1 when inserted, 0 when the row was there. On MariaDB this is
     * {@code INSERT IGNORE}, which also turns data errors (a too-long string, say) into warnings:
     * bind values that are already valid.
     *
     * @throws UnsupportedOperationException for {@link #H2} and {@link #OTHER}
     */
    public String insertIfAbsent(String table, List<String> columns, List<String> keyColumns) {
        return insertIfAbsent(table, columns, java.util.Collections.nCopies(columns == null ? 0 : columns.size(), "?"),
                keyColumns);
    }

    /**
     * As {@link #insertIfAbsent(String, List, List)}, with {@code values} as the SQL expression of
     * each column (a {@code ?}, or an expression such as {@link #epochMillisNow()}{@code + ?}):
     * the statement's parameters are the {@code ?} in the order they appear.
     */
    public String insertIfAbsent(String table, List<String> columns, List<String> values, List<String> keyColumns) {
        String insert = insertInto(table, columns, values, keyColumns);
        return switch (this) {
            case POSTGRESQL, SQLITE -> insert + " ON CONFLICT (" + String.join(", ", keyColumns) + ") DO NOTHING";
            // not ON DUPLICATE KEY UPDATE k = k: Connector/J then reports 1 for an existing row
            case MARIADB -> "INSERT IGNORE" + insert.substring("INSERT".length());
            case H2, OTHER -> throw new UnsupportedOperationException("insertIfAbsent is not known for " + this);
        };
    }

    /**
     * An {@code INSERT} of {@code columns} (one {@code ?} each, in order) that, when a row with
     * the same {@code keyColumns} exists, overwrites its other columns instead.
     *
     * @throws UnsupportedOperationException for {@link #H2} and {@link #OTHER}
     */
    public String upsert(String table, List<String> columns, List<String> keyColumns) {
        String insert = insertInto(table, columns, placeholders(columns), keyColumns);
        List<String> others = columns.stream().filter(c -> !keyColumns.contains(c)).toList();
        if (others.isEmpty()) {
            return insertIfAbsent(table, columns, keyColumns);
        }
        return switch (this) {
            case POSTGRESQL, SQLITE -> insert + " ON CONFLICT (" + String.join(", ", keyColumns) + ") DO UPDATE SET "
                    + String.join(", ", others.stream().map(c -> c + " = excluded." + c).toList());
            case MARIADB -> insert + " ON DUPLICATE KEY UPDATE "
                    + String.join(", ", others.stream().map(c -> c + " = VALUES(" + c + ")").toList());
            case H2, OTHER -> throw new UnsupportedOperationException("upsert is not known for " + this);
        };
    }

    /**
     * An SQL expression for the database server's current time in milliseconds since the epoch:
     * the same value wherever it appears in one statement (PostgreSQL {@code statement_timestamp()},
     * SQLite {@code 'now'}, MariaDB {@code NOW(3)}). Stores that several machines share compare
     * leases and expiries with it, so that the machines' own clocks need not agree.
     *
     * @throws UnsupportedOperationException for {@link #H2} and {@link #OTHER}
     */
    public String epochMillisNow() {
        return switch (this) {
            case POSTGRESQL -> "CAST(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000) AS BIGINT)";
            case SQLITE -> "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";
            case MARIADB -> "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";
            case H2, OTHER -> throw new UnsupportedOperationException("epochMillisNow is not known for " + this);
        };
    }

    private static String insertInto(String table, List<String> columns, List<String> values, List<String> keyColumns) {
        if (table == null || !TABLE.matcher(table).matches()) {
            throw new IllegalArgumentException("table must be a plain SQL identifier, optionally schema-qualified, got '"
                    + table + "'");
        }
        if (columns == null || columns.isEmpty()) {
            throw new IllegalArgumentException("columns must not be empty, got " + columns);
        }
        if (values == null || values.size() != columns.size() || values.stream().anyMatch(v -> v == null)) {
            throw new IllegalArgumentException("values must hold one expression per column " + columns + ", got " + values);
        }
        if (keyColumns == null || keyColumns.isEmpty() || !columns.containsAll(keyColumns)) {
            throw new IllegalArgumentException("keyColumns must be a non-empty subset of columns " + columns
                    + ", got " + keyColumns);
        }
        columns.forEach(c -> requireIdentifier("columns", c));
        return "INSERT INTO " + table + " (" + String.join(", ", columns) + ") VALUES (" + String.join(", ", values) + ")";
    }

    /** One {@code ?} per column; none for a missing list, which {@link #insertInto} then rejects. */
    private static List<String> placeholders(List<String> columns) {
        return columns == null ? List.of() : java.util.Collections.nCopies(columns.size(), "?");
    }

    private static void requireIdentifier(String field, String name) {
        if (name == null || !IDENTIFIER.matcher(name).matches()) {
            throw new IllegalArgumentException(field + " must be a plain SQL identifier, got '" + name + "'");
        }
    }

}
