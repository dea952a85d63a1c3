package dev.stagger.spring.cloud.internal;

import dev.stagger.CircuitBreaker;
import dev.stagger.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A publisher guarded by a Stagger breaker alone (no retry): each subscription asks the breaker
 * for a permit, is refused with the breaker's {@code CircuitOpenException} when it has none, and
 * finishes the permit exactly once: the first value of a Mono or the completion of a Flux is a
 * success, an error is recorded as the breaker's predicate judges it, a cancellation gives the
 * permit back (a half-open probe that never reported). The call's duration, for a slow-call
 * threshold, is read on the registry's clock.
 */
final class ReactiveBreakerCalls {
    private ReactiveBreakerCalls() {
    }

    static <T> Mono<T> mono(CircuitBreaker breaker, Clock clock, Mono<T> source) {
        return Mono.defer(() -> {
            Outcome outcome = Outcome.start(breaker, clock);
            return outcome == null ? Mono.error(breaker.refusal())
                    : source.doOnSuccess(outcome::succeeded).doOnError(outcome::failed).doOnCancel(outcome::cancelled);
        });
    }

    static <T> Flux<T> flux(CircuitBreaker breaker, Clock clock, Flux<T> source) {
        return Flux.defer(() -> {
            Outcome outcome = Outcome.start(breaker, clock);
            return outcome == null ? Flux.error(breaker.refusal())
                    : source.doOnComplete(() -> outcome.succeeded(null)).doOnError(outcome::failed).doOnCancel(outcome::cancelled);
        });
    }

    /** One subscription's permit, finished once whichever signal comes first. */
    private static final class Outcome {
        private final CircuitBreaker breaker;
        private final CircuitBreaker.Permit permit;
        private final Clock clock;
        private final long start;
        private final AtomicBoolean finished = new AtomicBoolean();

        /** A subscription's outcome to report, or null when the breaker refuses it. */
        static @Nullable Outcome start(CircuitBreaker breaker, Clock clock) {
            CircuitBreaker.Permit permit = breaker.tryAcquirePermission();
            return permit.isGranted() ? new Outcome(breaker, permit, clock) : null;
        }

        private Outcome(CircuitBreaker breaker, CircuitBreaker.Permit permit, Clock clock) {
            this.breaker = breaker;
            this.permit = permit;
            this.clock = clock;
            this.start = clock.nanoTime();
        }

        void succeeded(@Nullable Object result) {
            if (finished.compareAndSet(false, true)) {
                breaker.record(permit, result, null, Duration.ofNanos(clock.nanoTime() - start));
            }
        }

        void failed(Throwable failure) {
            if (finished.compareAndSet(false, true)) {
                breaker.record(permit, null, failure, Duration.ofNanos(clock.nanoTime() - start));
            }
        }

        void cancelled() {
            if (finished.compareAndSet(false, true)) {
                breaker.releasePermission(permit);
            }
        }
    }
}
