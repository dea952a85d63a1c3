package dev.stagger.rabbitmq;

import dev.stagger.EndReason;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link RabbitConsumer} did with one delivery, told to its {@link MessageListener}s.
 */
public final class MessageEvent {
    private final String consumer;
    private final String queue;
    private final @Nullable String messageId;
    private final int attempt;
    private final int maxAttempts;
    private final MessageOutcome outcome;
    private final Duration handlerTime;
    private final Duration elapsed;
    private final Duration delay;
    private final @Nullable EndReason endReason;
    private final @Nullable Throwable failure;

    /**
     * @param messageId the message-id property, or null when the publisher set none
     * @param elapsed the time since the message's first attempt began
     * @param delay the wait before the next attempt (RETRIED), else zero
     * @param endReason why a DEAD_LETTERED message ended, else null
     * @param failure the handler's failure, null when it succeeded
     */
    public MessageEvent(String consumer, String queue, @Nullable String messageId, int attempt, int maxAttempts,
                        MessageOutcome outcome, Duration handlerTime, Duration elapsed, Duration delay,
                        @Nullable EndReason endReason, @Nullable Throwable failure) {
        this.consumer = Objects.requireNonNull(consumer, "consumer must not be null");
        this.queue = Objects.requireNonNull(queue, "queue must not be null");
        this.messageId = messageId;
        this.attempt = attempt;
        this.maxAttempts = maxAttempts;
        this.outcome = Objects.requireNonNull(outcome, "outcome must not be null");
        this.handlerTime = Objects.requireNonNull(handlerTime, "handlerTime must not be null");
        this.elapsed = Objects.requireNonNull(elapsed, "elapsed must not be null");
        this.delay = Objects.requireNonNull(delay, "delay must not be null");
        this.endReason = endReason;
        this.failure = failure;
    }

    /** The consumer's name. */
    public String consumer() {
        return consumer;
    }

    /** The work queue. */
    public String queue() {
        return queue;
    }

    public Optional<String> messageId() {
        return Optional.ofNullable(messageId);
    }

    /** The attempt this delivery was, 1 for the first. */
    public int attempt() {
        return attempt;
    }

    /** Attempts allowed in all by the consumer's policy. */
    public int maxAttempts() {
        return maxAttempts;
    }

    public MessageOutcome outcome() {
        return outcome;
    }

    /** How long the handler ran (zero when it did not run: a message returned unopened at shutdown). */
    public Duration handlerTime() {
        return handlerTime;
    }

    /** The time since the message's first attempt began (wall clock, from {@link MessageHeaders#FIRST_ATTEMPT_AT}). */
    public Duration elapsed() {
        return elapsed;
    }

    /** The wait before the next attempt of a RETRIED message; zero otherwise. */
    public Duration delay() {
        return delay;
    }

    /** Why a DEAD_LETTERED message ended. */
    public Optional<EndReason> endReason() {
        return Optional.ofNullable(endReason);
    }

    /** The handler's failure, when it threw. */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public String toString() {
        return "MessageEvent[" + consumer + ", " + outcome + ", attempt " + attempt + "/" + maxAttempts
                + (outcome == MessageOutcome.RETRIED ? ", delay " + delay : "")
                + (endReason != null ? ", " + endReason : "") + "]";
    }
}
