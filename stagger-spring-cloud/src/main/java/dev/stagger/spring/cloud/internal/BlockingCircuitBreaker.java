package dev.stagger.spring.cloud.internal;

import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.cloud.client.circuitbreaker.CircuitBreaker;

/**
 * Spring Cloud's blocking {@link CircuitBreaker} on a {@link Guards.Guard}: the call runs through
 * the Stagger retry when there is one (which checks the breaker before every attempt), else
 * through the breaker alone; anything it ends with, a refusal included
 * ({@code CircuitOpenException}, {@code BudgetExhaustedException}), goes to the fallback.
 */
public final class BlockingCircuitBreaker implements CircuitBreaker {
    private final Guards.Guard guard;

    public BlockingCircuitBreaker(Guards.Guard guard) {
        this.guard = guard;
    }

    @Override
    public <T> T run(Supplier<T> toRun, Function<Throwable, T> fallback) {
        try {
            return guard.retry() != null ? guard.retry().call(toRun::get) : guard.breaker().call(toRun::get);
        } catch (Exception e) { // an Error is not the downstream failing: it propagates
            return fallback.apply(e);
        }
    }

    @Override
    public String toString() {
        return "StaggerCircuitBreaker{" + guard.config() + "}";
    }
}
