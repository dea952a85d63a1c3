package dev.stagger.jobs;

import java.sql.Connection;
import java.time.Duration;

/**
 * What a {@link JobHandler} knows and can do about the job it runs. Valid only during that call;
 * not thread-safe.
 */
public interface JobContext {

    /** The job as claimed: its {@link Job#attempt()} is this attempt's number (1 for the first). */
    Job job();

    /** The payload decoded as UTF-8. */
    default String payloadText() {
        return job().payloadText();
    }

    /**
     * Puts the job back to run again after {@code delay}, without counting this attempt (a
     * resource is not ready yet; a rate limit says wait). Takes effect when the handler returns
     * normally; a handler that throws after snoozing fails as usual.
     *
     * @throws IllegalArgumentException if {@code delay} is negative or longer than 1,000 years
     */
    void snooze(Duration delay);

    /**
     * Marks the job SUCCEEDED using {@code connection} and does not commit: the completion commits
     * or rolls back with the caller's own writes, so business effects and job completion happen
     * together (effectively once). Call it last in the transaction, just before commit.
     *
     * @throws LeaseLostException if this worker no longer holds the job; roll back then
     * @throws dev.stagger.jdbc.StoreException if the statement fails; roll back then
     */
    void completeWithin(Connection connection);

    /** True once the pool is shutting down: a long handler may stop early and snooze itself. */
    boolean isShuttingDown();
}
