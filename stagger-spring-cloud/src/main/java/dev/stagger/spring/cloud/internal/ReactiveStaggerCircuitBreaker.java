package dev.stagger.spring.cloud.internal;

import dev.stagger.Clock;
import dev.stagger.spring.internal.ReactorRetries;
import java.util.function.Function;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreaker;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Spring Cloud's {@link ReactiveCircuitBreaker} on a {@link Guards.Guard}: with a Stagger retry,
 * each attempt is one subscription started by the retry, whose waits are scheduled on its clock
 * (no thread blocks), as for a reactive {@code @StaggerRetry} method; without one, the breaker
 * alone guards each subscription. Anything the call ends with, a refusal included, goes to the
 * fallback.
 */
public final class ReactiveStaggerCircuitBreaker implements ReactiveCircuitBreaker {
    private final Guards.Guard guard;
    private final Clock clock;

    public ReactiveStaggerCircuitBreaker(Guards.Guard guard, Clock clock) {
        this.guard = guard;
        this.clock = clock;
    }

    @Override
    public <T> Mono<T> run(Mono<T> toRun, Function<Throwable, Mono<T>> fallback) {
        Mono<T> guarded = guard.retry() != null ? ReactorRetries.mono(guard.retry(), toRun)
                : ReactiveBreakerCalls.mono(guard.breaker(), clock, toRun);
        return guarded.onErrorResume(fallback);
    }

    @Override
    public <T> Flux<T> run(Flux<T> toRun, Function<Throwable, Flux<T>> fallback) {
        Flux<T> guarded = guard.retry() != null ? ReactorRetries.flux(guard.retry(), toRun)
                : ReactiveBreakerCalls.flux(guard.breaker(), clock, toRun);
        return guarded.onErrorResume(fallback);
    }

    @Override
    public String toString() {
        return "StaggerReactiveCircuitBreaker{" + guard.config() + "}";
    }
}
