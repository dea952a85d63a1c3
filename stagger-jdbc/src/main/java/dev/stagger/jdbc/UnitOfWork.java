package dev.stagger.jdbc;

import java.sql.Connection;

/**
 * The body of a transaction run by {@link Transactions#call(UnitOfWork)}. It may run several
 * times: it must do nothing outside the database that cannot be repeated (no e-mail, no HTTP
 * call, no counter in memory), and it must not commit, roll back or close the connection.
 */
@FunctionalInterface
public interface UnitOfWork<T> {
    T execute(Connection connection) throws Exception;
}
