package dev.stagger.observability;

import dev.stagger.EndReason;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryRefusedException;
import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.Locale;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Writes one structured log line per retry and one per give-up, as SLF4J 2 key-value pairs, so
 * any structured encoder (logback's {@code JsonEncoder}, for one) turns them into JSON fields that
 * a log search can count and group by.
 *
 * <p>A retry line (at {@link Builder#retryLevel(Level) INFO by default}, or DEBUG) carries, in
 * this order:
 * <ul>
 *   <li>{@code event} — {@value #RETRY} ({@code http_retry} when written by the HTTP module);
 *   <li>{@code service}, {@code operation} — what was called;
 *   <li>{@code attempt} — the attempt that just failed (1 for the first);
 *   <li>{@code max_attempts} — attempts allowed in all;
 *   <li>{@code status} — the failed attempt's status code, when the status function knows it;
 *   <li>{@code delay_ms} — the wait before attempt {@code attempt + 1};
 *   <li>{@code request_id} — when the request id function knows it;
 *   <li>{@code reason} — why the attempt is retried: by default the exception's simple class name,
 *       or {@code result} when a returned result was retried.
 * </ul>
 * A give-up line, at WARN, carries {@code event} ({@value #GIVE_UP}), {@code service},
 * {@code operation}, {@code reason} (the call's {@link EndReason} in lower case:
 * {@code exhausted}, {@code deadline}, {@code budget}, {@code circuit_open}, ...),
 * {@code attempts}, {@code max_attempts}, {@code elapsed_ms}, and {@code status},
 * {@code request_id}, {@code error} (the last failure's simple class name) when known.
 * Keys whose value is unknown are left out rather than written as null.
 *
 * <p>A call whose {@link dev.stagger.Fallback} ran writes a fallback line instead of a give-up
 * line: {@code event} ({@value #FALLBACK}), {@code service}, {@code operation}, {@code reason},
 * {@code kind} (the fallback's: {@code cache}, {@code queue}, {@code message}, ...),
 * {@code outcome} ({@code served}, {@code declined} or {@code failed}), {@code attempts},
 * {@code max_attempts}, {@code elapsed_ms}, and {@code error} when the fallback itself threw. It
 * is written at the retry level (degraded answers are routine while a downstream is down, and an
 * open breaker would otherwise flood WARN), at WARN when the fallback threw. A declined fallback
 * (nothing cached) is followed by the give-up line as without one.
 *
 * <p>A give-up is a call that failed at least once and then ended without success, except a
 * permanent failure on the first attempt (a 404 is not a retry giving up, and logging every one at
 * WARN would bury the lines that matter). Calls refused before their first attempt (an open
 * circuit) write nothing: the breaker's metrics count them without flooding the log.
 *
 * <p>A hedged call ({@link dev.stagger.HedgePolicy}) writes, at DEBUG (hedges are routine: about
 * one call in twenty with a 95th-percentile delay), a line per hedge sent ({@code event}
 * {@value #HEDGE}, {@code attempt}, {@code max_attempts}, {@code delay_ms}), per call won by a
 * hedge ({@value #HEDGE_WON}, {@code attempt}, {@code running}) and per attempt cancelled
 * ({@value #ATTEMPT_CANCELLED}, {@code attempt}, {@code reason}), each with {@code service} and
 * {@code operation}.
 *
 * <p>Immutable and thread-safe. Nothing is computed when the logger's level is off.
 */
public final class RetryLog implements RetryListener {
    /** The {@code event} value of a retry line. */
    public static final String RETRY = "retry";
    /** The {@code event} value of a give-up line. */
    public static final String GIVE_UP = "give_up";
    /** The {@code event} value of a fallback line. */
    public static final String FALLBACK = "fallback";
    /** The {@code event} value of a deferral line. */
    public static final String DEFERRED = "deferred";
    /** The {@code event} value of a hedge-sent line. */
    public static final String HEDGE = "hedge";
    /** The {@code event} value of a line for a call won by a hedge. */
    public static final String HEDGE_WON = "hedge_won";
    /** The {@code event} value of a line for a hedged call's attempt cancelled. */
    public static final String ATTEMPT_CANCELLED = "attempt_cancelled";
    /** The logger used unless {@link Builder#loggerName(String)} names another. */
    public static final String DEFAULT_LOGGER = "dev.stagger.retry";

    private final Logger logger;
    private final Level retryLevel;
    private final @Nullable String service;
    private final @Nullable String operation;
    private final @Nullable BiFunction<Object, Throwable, Integer> status;
    private final @Nullable BiFunction<Object, Throwable, String> requestId;
    private final BiFunction<Object, Throwable, String> reason;

    private RetryLog(Builder b) {
        this.logger = b.logger != null ? b.logger : LoggerFactory.getLogger(b.loggerName);
        this.retryLevel = b.retryLevel;
        this.service = b.service;
        this.operation = b.operation;
        this.status = b.status;
        this.requestId = b.requestId;
        this.reason = b.reason;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void onRetryScheduled(RetryEvent.RetryScheduled event) {
        if (!logger.isEnabledForLevel(retryLevel)) {
            return;
        }
        Object result = event.result();
        Throwable cause = event.cause();
        logRetry(RETRY, service != null ? service : event.name(), operation, event.nextAttempt() - 1,
                event.maxAttempts(), extract(status, result, cause), millis(event.delay()),
                extract(requestId, result, cause), extract(reason, result, cause));
    }

    /**
     * A deferral line, at the retry level: {@code event} ({@value #DEFERRED}), {@code service}
     * (the enclosing retry), {@code operation}, {@code inner} (the retry that decided),
     * {@code inner_attempts}, {@code inner_reason}, {@code attempt} (the enclosing retry's) and
     * {@code error}.
     */
    @Override
    public void onDeferred(RetryEvent.Deferred event) {
        if (!logger.isEnabledForLevel(retryLevel)) {
            return;
        }
        LoggingEventBuilder line = logger.atLevel(retryLevel);
        line = line.addKeyValue("event", DEFERRED);
        line = addIfKnown(line, "service", service != null ? service : event.name());
        line = addIfKnown(line, "operation", operation);
        line = line.addKeyValue("inner", event.inner());
        line = line.addKeyValue("inner_attempts", event.innerAttempts());
        line = line.addKeyValue("inner_reason", event.innerReason().name().toLowerCase(Locale.ROOT));
        line = line.addKeyValue("attempt", event.attempt());
        line = line.addKeyValue("error", event.failure().getClass().getSimpleName());
        line.setMessage("{}: not retried, retry '{}' decided on it after {} attempts ({})")
                .addArgument(target(service != null ? service : event.name(), operation))
                .addArgument(event.inner())
                .addArgument(event.innerAttempts())
                .addArgument(event.innerReason().name().toLowerCase(Locale.ROOT))
                .log();
    }

    @Override
    public void onHedgeSent(RetryEvent.HedgeSent event) {
        LoggingEventBuilder line = hedgeLine(HEDGE, event.name(), event.attempt());
        if (line != null) {
            line.addKeyValue("max_attempts", event.maxAttempts()).addKeyValue("delay_ms", millis(event.delay()))
                    .setMessage("{}: attempt {} slower than {} ms, hedge sent")
                    .addArgument(target(service != null ? service : event.name(), operation))
                    .addArgument(event.attempt() - 1).addArgument(millis(event.delay())).log();
        }
    }

    @Override
    public void onHedgeWon(RetryEvent.HedgeWon event) {
        LoggingEventBuilder line = hedgeLine(HEDGE_WON, event.name(), event.attempt());
        if (line != null) {
            line.addKeyValue("running", event.running())
                    .setMessage("{}: hedge (attempt {}) answered first")
                    .addArgument(target(service != null ? service : event.name(), operation))
                    .addArgument(event.attempt()).log();
        }
    }

    @Override
    public void onAttemptCancelled(RetryEvent.AttemptCancelled event) {
        String reasonTag = event.reason().name().toLowerCase(Locale.ROOT);
        LoggingEventBuilder line = hedgeLine(ATTEMPT_CANCELLED, event.name(), event.attempt());
        if (line != null) {
            line.addKeyValue("reason", reasonTag)
                    .setMessage("{}: attempt {} cancelled ({})")
                    .addArgument(target(service != null ? service : event.name(), operation))
                    .addArgument(event.attempt()).addArgument(reasonTag).log();
        }
    }

    /** A DEBUG line with {@code event}, {@code service}, {@code operation} and {@code attempt}; null when DEBUG is off. */
    private @Nullable LoggingEventBuilder hedgeLine(String event, String name, int attempt) {
        if (!logger.isEnabledForLevel(Level.DEBUG)) {
            return null;
        }
        LoggingEventBuilder line = logger.atLevel(Level.DEBUG).addKeyValue("event", event);
        line = addIfKnown(line, "service", service != null ? service : name);
        line = addIfKnown(line, "operation", operation);
        return line.addKeyValue("attempt", attempt);
    }

    @Override
    public void onCallFinished(RetryEvent.CallFinished event) {
        RetryEvent.FallbackRun fallback = event.fallback();
        if (fallback != null) {
            logFallback(event, fallback);
            if (fallback.outcome() != RetryEvent.FallbackRun.Outcome.DECLINED) {
                return; // the fallback line says why the call ended; its answer is not the downstream's
            }
        }
        if (!isGiveUp(event.reason(), event.attempts()) || !logger.isEnabledForLevel(Level.WARN)) {
            return;
        }
        Object result = event.result();
        Throwable failure = event.failure();
        if (failure instanceof RetryRefusedException refused) {
            result = refused.lastResult();
            failure = refused.getCause();
        }
        logGiveUp(GIVE_UP, service != null ? service : event.name(), operation, event.attempts(),
                event.maxAttempts(), extract(status, result, failure), millis(event.elapsed()),
                extract(requestId, result, failure), event.reason().name().toLowerCase(Locale.ROOT),
                failure == null ? null : failure.getClass().getSimpleName());
    }

    private void logFallback(RetryEvent.CallFinished event, RetryEvent.FallbackRun fallback) {
        boolean failed = fallback.outcome() == RetryEvent.FallbackRun.Outcome.FAILED;
        Level level = failed ? Level.WARN : retryLevel;
        if (!logger.isEnabledForLevel(level)) {
            return;
        }
        String target = service != null ? service : event.name();
        String reasonTag = event.reason().name().toLowerCase(Locale.ROOT);
        String outcome = fallback.outcome().name().toLowerCase(Locale.ROOT);
        LoggingEventBuilder line = logger.atLevel(level);
        line = line.addKeyValue("event", FALLBACK);
        line = addIfKnown(line, "service", target);
        line = addIfKnown(line, "operation", operation);
        line = line.addKeyValue("reason", reasonTag);
        line = line.addKeyValue("kind", fallback.kind());
        line = line.addKeyValue("outcome", outcome);
        line = line.addKeyValue("attempts", event.attempts());
        line = line.addKeyValue("max_attempts", event.maxAttempts());
        line = line.addKeyValue("elapsed_ms", millis(event.elapsed()));
        if (failed && event.failure() != null) {
            line = line.addKeyValue("error", event.failure().getClass().getSimpleName());
        }
        line.setMessage("{}: {} after {} attempts ({}): fallback '{}' {}")
                .addArgument(target(target, operation))
                .addArgument(reasonTag)
                .addArgument(event.attempts())
                .addArgument(millis(event.elapsed()) + " ms")
                .addArgument(fallback.kind())
                .addArgument(outcome)
                .log();
    }

    /** See the class comment: failed at least once, and not a permanent failure of the first attempt. */
    static boolean isGiveUp(EndReason reason, int attempts) {
        return !reason.isSuccess() && attempts >= 1 && !(reason == EndReason.NOT_RETRYABLE && attempts == 1);
    }

    /**
     * Writes a retry line with the given values, at this log's retry level, exactly as a retry
     * seen by the listener is written. For integrations that have their own events (the HTTP
     * module writes {@code event=http_retry}). Null values are left out.
     */
    void logRetry(String event, @Nullable String service, @Nullable String operation, int attempt, int maxAttempts,
                         @Nullable Integer status, long delayMs, @Nullable String requestId, @Nullable String reason) {
        if (!logger.isEnabledForLevel(retryLevel)) {
            return;
        }
        LoggingEventBuilder line = logger.atLevel(retryLevel);
        line = line.addKeyValue("event", event);
        line = addIfKnown(line, "service", service);
        line = addIfKnown(line, "operation", operation);
        line = line.addKeyValue("attempt", attempt);
        line = line.addKeyValue("max_attempts", maxAttempts);
        line = addIfKnown(line, "status", status);
        line = line.addKeyValue("delay_ms", delayMs);
        line = addIfKnown(line, "request_id", requestId);
        line = addIfKnown(line, "reason", reason);
        line.setMessage("{}: attempt {}/{} failed ({}), retrying in {} ms")
                .addArgument(target(service, operation))
                .addArgument(attempt).addArgument(maxAttempts)
                .addArgument(status != null ? "status " + status : reason)
                .addArgument(delayMs)
                .log();
    }

    /**
     * Writes a give-up line at WARN with the given values, exactly as the listener does. For
     * integrations that have their own events. Null values are left out.
     */
    void logGiveUp(String event, @Nullable String service, @Nullable String operation, int attempts, int maxAttempts,
                          @Nullable Integer status, long elapsedMs, @Nullable String requestId, @Nullable String reason,
                          @Nullable String error) {
        if (!logger.isEnabledForLevel(Level.WARN)) {
            return;
        }
        LoggingEventBuilder line = logger.atWarn();
        line = line.addKeyValue("event", event);
        line = addIfKnown(line, "service", service);
        line = addIfKnown(line, "operation", operation);
        line = addIfKnown(line, "reason", reason);
        line = line.addKeyValue("attempts", attempts);
        line = line.addKeyValue("max_attempts", maxAttempts);
        line = line.addKeyValue("elapsed_ms", elapsedMs);
        line = addIfKnown(line, "status", status);
        line = addIfKnown(line, "request_id", requestId);
        line = addIfKnown(line, "error", error);
        line.setMessage("{}: giving up after {}/{} attempts in {} ms ({})")
                .addArgument(target(service, operation))
                .addArgument(attempts).addArgument(maxAttempts)
                .addArgument(elapsedMs)
                .addArgument(status != null ? reason + ", last status " + status : reason)
                .log();
    }

    /** "service operation" for the human-readable message. */
    private static String target(@Nullable String service, @Nullable String operation) {
        if (operation == null) {
            return String.valueOf(service);
        }
        return service == null ? operation : service + " " + operation;
    }

    /** {@code line} with {@code key=value} added, or {@code line} itself when the value is null. */
    private static LoggingEventBuilder addIfKnown(LoggingEventBuilder line, String key, @Nullable Object value) {
        return value == null ? line : line.addKeyValue(key, value);
    }

    /** A user function's answer, or null when it has none or fails (a log line must not be lost to it). */
    private static <T> @Nullable T extract(@Nullable BiFunction<Object, Throwable, T> f, @Nullable Object result,
                                           @Nullable Throwable failure) {
        if (f == null) {
            return null;
        }
        try {
            return f.apply(result, failure);
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static long millis(Duration d) {
        try {
            return d.toMillis();
        } catch (ArithmeticException beyondLong) {
            return Long.MAX_VALUE;
        }
    }

    private static String defaultReason(@Nullable Object result, @Nullable Throwable failure) {
        return failure != null ? failure.getClass().getSimpleName() : "result";
    }

    @Override
    public String toString() {
        return "RetryLog{" + logger.getName() + ", retries at " + retryLevel + ", service=" + service
                + ", operation=" + operation + "}";
    }

    /** Builds a {@link RetryLog}. Every setting is optional. */
    public static final class Builder {
        private String loggerName = DEFAULT_LOGGER;
        private @Nullable Logger logger;
        private Level retryLevel = Level.INFO;
        private @Nullable String service;
        private @Nullable String operation;
        private @Nullable BiFunction<Object, Throwable, Integer> status;
        private @Nullable BiFunction<Object, Throwable, String> requestId;
        private BiFunction<Object, Throwable, String> reason = RetryLog::defaultReason;

        private Builder() {
        }

        /** The {@code service} value; the retry's name when not set. */
        public Builder service(String service) {
            this.service = Checks.notBlank("service", service);
            return this;
        }

        /** The {@code operation} value (say {@code charge}); left out when not set. */
        public Builder operation(String operation) {
            this.operation = Checks.notBlank("operation", operation);
            return this;
        }

        /** The name of the SLF4J logger to write to. Default {@value RetryLog#DEFAULT_LOGGER}. */
        public Builder loggerName(String loggerName) {
            this.loggerName = Checks.notBlank("loggerName", loggerName);
            this.logger = null;
            return this;
        }

        /** The SLF4J logger to write to, when it does not come from the global {@link LoggerFactory}. */
        public Builder logger(Logger logger) {
            this.logger = Checks.notNull("logger", logger);
            return this;
        }

        /**
         * The level of retry lines: INFO (default), DEBUG or TRACE. Retries are routine; WARN and
         * ERROR are refused so that give-ups, always at WARN, stand out above them.
         */
        public Builder retryLevel(Level level) {
            if (level == null || level == Level.WARN || level == Level.ERROR) {
                throw new IllegalArgumentException("retryLevel must be INFO, DEBUG or TRACE, got " + level);
            }
            this.retryLevel = level;
            return this;
        }

        /**
         * Finds the failed attempt's status code from its result (when a result such as an HTTP
         * response was retried) or its exception; null when unknown.
         */
        public Builder status(BiFunction<Object, Throwable, Integer> status) {
            this.status = Checks.notNull("status", status);
            return this;
        }

        /**
         * Finds the request id from the failed attempt's result or exception, or elsewhere (the
         * MDC: {@code (result, failure) -> MDC.get("requestId")}); null when unknown.
         */
        public Builder requestId(BiFunction<Object, Throwable, String> requestId) {
            this.requestId = Checks.notNull("requestId", requestId);
            return this;
        }

        /**
         * The {@code reason} of a retry line. Default: the exception's simple class name, or
         * {@code result}. Keep the values few (a class name, an error code), never a message.
         */
        public Builder reason(BiFunction<Object, Throwable, String> reason) {
            this.reason = Checks.notNull("reason", reason);
            return this;
        }

        public RetryLog build() {
            return new RetryLog(this);
        }
    }
}
