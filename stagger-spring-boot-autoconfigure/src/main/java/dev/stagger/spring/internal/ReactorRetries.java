package dev.stagger.spring.internal;

import dev.stagger.Retry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.aopalliance.intercept.MethodInvocation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reactor return types, loaded only when Reactor is present. Each attempt is one subscription to
 * the method's publisher, started by {@link Retry#callAsync}: the engine schedules the waits on
 * its clock, so no thread blocks and the schedule is Stagger's own.
 */
final class ReactorRetries {
    private ReactorRetries() {
    }

    static boolean isMono(Class<?> type) {
        return Mono.class.isAssignableFrom(type);
    }

    static boolean isFlux(Class<?> type) {
        return Flux.class.isAssignableFrom(type);
    }

    static Mono<Object> mono(Retry retry, Object publisher, Fallback fallback, MethodInvocation invocation) {
        @SuppressWarnings("unchecked")
        Mono<Object> source = (Mono<Object>) publisher;
        Mono<Object> retried = Mono.fromFuture(() -> retry.callAsync(() -> source.toFuture()));
        return fallback == null ? retried : retried.onErrorResume(failure -> fallbackMono(fallback, invocation, failure));
    }

    static Flux<Object> flux(Retry retry, Object publisher, Fallback fallback, MethodInvocation invocation) {
        @SuppressWarnings("unchecked")
        Flux<Object> source = (Flux<Object>) publisher;
        Flux<Object> retried = Flux.create(sink -> {
            CompletableFuture<Object> call = retry.callAsync(() -> source.doOnNext(sink::next).then(Mono.empty()).toFuture());
            call.whenComplete((ignored, failure) -> {
                if (failure == null) {
                    sink.complete();
                } else {
                    sink.error(failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
                }
            });
            sink.onDispose(() -> call.cancel(true));
        });
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
