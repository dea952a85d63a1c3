package dev.stagger.jdbc;

import java.sql.Connection;

/** A {@link UnitOfWork} with no result, run by {@link Transactions#run(VoidUnitOfWork)}. */
@FunctionalInterface
public interface VoidUnitOfWork {
    void execute(Connection connection) throws Exception;
}
