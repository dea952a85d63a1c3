package dev.stagger.spring.internal;

import dev.stagger.AttemptContext;
import dev.stagger.Retry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reactor return types, loaded only when Reactor is present. Each attempt is one subscription to
 * the method's publisher, started by {@link Retry#callAsync}: the engine schedules the waits on
 * its clock, so no thread blocks and the schedule is Stagger's own. The attempt travels in the
 * subscription's Reactor context ({@link #ATTEMPT}), so a Stagger retry the pipeline starts on
 * another thread (the WebClient filter's) still runs inside it and follows the one-layer rule.
 * With Micrometer's context-propagation present, the thread locals of the attempt's start (its
 * observation, made current by a {@code RetryObservation}) are captured into the subscription's
 * context too, so a {@code WebClient} span the pipeline starts is the attempt's child. Used by the
 * {@code @StaggerRetry} advice and by stagger-spring-cloud's reactive circuit breaker.
 */
public final class ReactorRetries {
    /** The key of the {@link AttemptContext} of the annotated method's attempt in the Reactor context. */
    static final String ATTEMPT = "dev.stagger.attempt";

    private ReactorRetries() {
    }

    static boolean isMono(Class<?> type) {
        return Mono.class.isAssignableFrom(type);
    }

    static boolean isFlux(Class<?> type) {
        return Flux.class.isAssignableFrom(type);
    }

    /** {@code source} run by {@code retry}: each attempt one subscription, the waits on the retry's clock. */
    public static <T> Mono<T> mono(Retry retry, Mono<T> source) {
        return Mono.fromFuture(() -> retry.callAsync(
                (AttemptContext attempt) -> source.contextWrite(c -> c.put(ATTEMPT, attempt)).contextCapture().toFuture()));
    }

    /**
     * {@code source} run by {@code retry}: each attempt one subscription, whose elements are passed
     * on as they come (a retried attempt's elements included), the waits on the retry's clock.
     */
    public static <T> Flux<T> flux(Retry retry, Flux<T> source) {
        return Flux.create(sink -> {
            CompletableFuture<Object> call = retry.callAsync((AttemptContext attempt) -> source.doOnNext(sink::next)
                    .then(Mono.empty()).contextWrite(c -> c.put(ATTEMPT, attempt)).contextCapture().toFuture());
            call.whenComplete((ignored, failure) -> {
                if (failure == null) {
                    sink.complete();
                } else {
                    sink.error(failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
                }
            });
            sink.onDispose(() -> call.cancel(true));
        });
    }

    static Mono<Object> mono(Retry retry, @Nullable Object publisher, @Nullable Fallback fallback,
                             MethodInvocation invocation) {
        // a Mono method that returned null fails in each attempt, as it always has
        @SuppressWarnings({"unchecked", "NullAway"})
        Mono<Object> retried = mono(retry, (Mono<Object>) publisher);
        return fallback == null ? retried : retried.onErrorResume(failure -> fallbackMono(fallback, invocation, failure));
    }

    static Flux<Object> flux(Retry retry, @Nullable Object publisher, @Nullable Fallback fallback,
                             MethodInvocation invocation) {
        // a Flux method that returned null fails in each attempt, as it always has
        @SuppressWarnings({"unchecked", "NullAway"})
        Flux<Object> retried = flux(retry, (Flux<Object>) publisher);
        if (fallback == null) {
            return retried;
        }
        return retried.onErrorResume(failure -> {
            try {
                @SuppressWarnings("unchecked")
                Flux<Object> answer = (Flux<Object>) fallback.invoke(invocation, failure);
                return answer == null ? Flux.empty() : answer;
            } catch (Throwable t) {
                return Flux.error(t);
            }
        });
    }

    @SuppressWarnings("unchecked")
    private static Mono<Object> fallbackMono(Fallback fallback, MethodInvocation invocation, Throwable failure) {
        try {
            Mono<Object> answer = (Mono<Object>) fallback.invoke(invocation, failure);
            return answer == null ? Mono.empty() : answer;
        } catch (Throwable t) {
            return Mono.error(t);
        }
    }
}
