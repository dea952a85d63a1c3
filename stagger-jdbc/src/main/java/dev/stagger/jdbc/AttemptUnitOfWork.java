package dev.stagger.jdbc;

import dev.stagger.AttemptContext;
import java.sql.Connection;

/**
 * A {@link UnitOfWork} that also wants the attempt in progress: which attempt it is, and its time
 * limit, which it can apply to its statements with {@link Transactions#applyQueryTimeout}.
 */
@FunctionalInterface
public interface AttemptUnitOfWork<T> {
    T execute(Connection connection, AttemptContext attempt) throws Exception;
}
