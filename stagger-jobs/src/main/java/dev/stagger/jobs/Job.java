package dev.stagger.jobs;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one stored job. Immutable: the payload is copied in and out.
 *
 * @param attempt attempts started so far (0 before the first claim); a snooze does not count
 * @param maxAttempts the job's own limit, or 0 when the worker's {@link dev.stagger.RetryPolicy} decides
 * @param finishedAt when it succeeded or went dead, null otherwise
 */
public record Job(long id, String queue, String type, byte[] payload, String key, JobState state, int priority,
                  int attempt, int maxAttempts, Instant runAt, Instant createdAt, @Nullable Instant finishedAt) {

    public Job {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(state, "state");
        payload = payload == null ? new byte[0] : payload.clone();
    }

    /** A copy of the payload bytes. */
    @Override
    public byte[] payload() {
        return payload.clone();
    }

    /** The payload decoded as UTF-8 (how {@link JobQueue#enqueue(String, String, String)} stored it). */
    public String payloadText() {
        return new String(payload, StandardCharsets.UTF_8);
    }

    /** The unique job key given at enqueue, if any. */
    public Optional<String> jobKey() {
        return Optional.ofNullable(key);
    }

    /** Equal when every component is, the payload compared by content. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Job j && j.id == id && j.queue.equals(queue) && j.type.equals(type)
                && Arrays.equals(j.payload, payload) && Objects.equals(j.key, key) && j.state == state
                && j.priority == priority && j.attempt == attempt && j.maxAttempts == maxAttempts
                && Objects.equals(j.runAt, runAt) && Objects.equals(j.createdAt, createdAt)
                && Objects.equals(j.finishedAt, finishedAt);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, state, attempt) * 31 + Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "Job{id=" + id + ", queue=" + queue + ", type=" + type + ", state=" + state + ", attempt=" + attempt
                + ", runAt=" + runAt + (key == null ? "" : ", key=" + key) + "}";
    }
}
