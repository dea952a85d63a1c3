package dev.stagger.grpc.internal;

import dev.stagger.AttemptContext;
import dev.stagger.AttemptTimeoutException;
import dev.stagger.Classifier;
import dev.stagger.Decision;
import dev.stagger.grpc.GrpcStatusTable;
import dev.stagger.http.StaggerHeaders;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * Classifies one gRPC attempt for the core engine: a status by the table and whether the method is
 * safe to call again, then the server's {@code grpc-retry-pushback-ms} (gRFC A6): a non-negative
 * integer is the least wait before the next attempt, anything else (a negative or malformed value)
 * means "do not retry".
 */
public final class GrpcClassifier implements Classifier {
    /** gRFC A6's pushback trailer. */
    public static final Metadata.Key<String> PUSHBACK =
            Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

    private final GrpcStatusTable table;
    private final boolean safe;

    public GrpcClassifier(GrpcStatusTable table, boolean safe) {
        this.table = table;
        this.safe = safe;
    }

    @Override
    public Decision classify(@Nullable Object result, @Nullable Throwable failure, AttemptContext context) {
        if (failure == null) {
            return Decision.accept();
        }
        Throwable t = unwrap(failure);
        if (t instanceof AttemptTimeoutException) {
            // the engine's own attempt timeout: as DEADLINE_EXCEEDED, the call may have been processed
            return table.retries(Status.Code.DEADLINE_EXCEEDED, safe) ? Decision.retry() : Decision.stop();
        }
        Status status;
        Metadata trailers;
        if (t instanceof StatusRuntimeException e) {
            status = e.getStatus();
            trailers = e.getTrailers();
        } else if (t instanceof StatusException e) {
            status = e.getStatus();
            trailers = e.getTrailers();
        } else {
            return Decision.stop(); // not an answer of the channel: a fault of the code around it
        }
        if (!table.retries(status.getCode(), safe)) {
            return Decision.stop();
        }
        return pushback(trailers == null ? null : trailers.get(PUSHBACK));
    }

    /**
     * The decision for a retryable status whose trailers carry {@code value} as
     * {@code grpc-retry-pushback-ms} (null: none): retry, retry after at least that many
     * milliseconds, or stop for a negative or malformed value. The digits are read by the rule that
     * reads Stagger's own millisecond headers ({@link StaggerHeaders#parseDeadlineMillis}).
     */
    static Decision pushback(@Nullable String value) {
        if (value == null) {
            return Decision.retry();
        }
        OptionalLong ms = StaggerHeaders.parseDeadlineMillis(value);
        if (ms.isEmpty()) {
            return Decision.stop();
        }
        return ms.getAsLong() == 0 ? Decision.retry() : Decision.retryAfter(Duration.ofMillis(ms.getAsLong()));
    }

    /** The failure inside the async wrappers a future adds. */
    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
