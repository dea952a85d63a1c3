package dev.stagger.spring;

import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** The two-account table the transfer tests move money in (each test names it uniquely per run). */
final class AccountsTable {
    private AccountsTable() {
    }

    static void create(DataSource dataSource, String table) {
        new JdbcTemplate(dataSource).execute("CREATE TABLE " + table + " (id TEXT PRIMARY KEY, balance INT NOT NULL)");
    }

    /** Puts the accounts back as they start: alice with 1000, bob with 0. */
    static void open(DataSource dataSource, String table) {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.update("DELETE FROM " + table);
        jdbc.update("INSERT INTO " + table + " VALUES ('alice', 1000), ('bob', 0)");
    }

    static void drop(DataSource dataSource, String table) {
        new JdbcTemplate(dataSource).execute("DROP TABLE IF EXISTS " + table);
    }
}
