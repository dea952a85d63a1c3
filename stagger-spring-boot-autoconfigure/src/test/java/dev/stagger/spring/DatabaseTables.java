package dev.stagger.spring;

import java.sql.Connection;
import java.sql.ResultSet;
import java.util.Set;
import java.util.TreeSet;
import javax.sql.DataSource;

/** The tables a test's database holds, read from the JDBC metadata. */
final class DatabaseTables {
    private DatabaseTables() {
    }

    /** The names of the tables matching {@code pattern} (a JDBC metadata pattern: {@code %} for any). */
    static Set<String> named(DataSource ds, String pattern) throws Exception {
        Set<String> tables = new TreeSet<>();
        try (Connection c = ds.getConnection(); ResultSet rs = c.getMetaData().getTables(null, null, pattern, null)) {
            while (rs.next()) {
                tables.add(rs.getString("TABLE_NAME"));
            }
        }
        return tables;
    }
}
