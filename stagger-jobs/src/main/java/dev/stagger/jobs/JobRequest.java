package dev.stagger.jobs;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One job to add with {@link JobQueue#enqueueAll}.
 *
 * @param payload the bytes handed to the handler (copied)
 */
public record JobRequest(String queue, String type, byte[] payload, EnqueueOptions options) {

    public JobRequest {
        Names.name("queue", queue);
        Names.name("type", type);
        payload = payload == null ? new byte[0] : payload.clone();
        options = Objects.requireNonNullElse(options, EnqueueOptions.defaults());
    }

    /** A job with a UTF-8 text payload and default options. */
    public static JobRequest of(String queue, String type, String payload) {
        return new JobRequest(queue, type, payload == null ? new byte[0] : payload.getBytes(StandardCharsets.UTF_8),
                EnqueueOptions.defaults());
    }

    /** A copy of the payload bytes. */
    @Override
    public byte[] payload() {
        return payload.clone();
    }

    byte[] payloadUnsafe() {
        return payload;
    }

    /** This request with other options. */
    public JobRequest with(EnqueueOptions options) {
        return new JobRequest(queue, type, payload, options);
    }
}
