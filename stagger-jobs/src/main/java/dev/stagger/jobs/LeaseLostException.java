package dev.stagger.jobs;

import java.sql.SQLException;

/**
 * This worker no longer owns the job: its lease expired and the job was rescued (and possibly
 * claimed elsewhere), or an operator changed it. Thrown by {@link JobContext#completeWithin} so
 * the caller's transaction rolls back instead of committing work for a job it does not own.
 */
public final class LeaseLostException extends SQLException {
    private static final long serialVersionUID = 1L;

    public LeaseLostException(long jobId, int attempt) {
        super("job " + jobId + " attempt " + attempt + " is no longer held by this worker (lease lost)");
    }
}
