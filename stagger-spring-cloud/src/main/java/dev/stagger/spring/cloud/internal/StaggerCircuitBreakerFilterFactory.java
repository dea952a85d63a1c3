package dev.stagger.spring.cloud.internal;

import dev.stagger.AttemptTimeoutException;
import dev.stagger.RetryRefusedException;
import java.util.concurrent.TimeoutException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreakerFactory;
import org.springframework.cloud.gateway.filter.factory.SpringCloudCircuitBreakerFilterFactory;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/**
 * Spring Cloud Gateway's {@code CircuitBreaker} route filter on Stagger's
 * {@link ReactiveCircuitBreakerFactory}. Gateway supplies the filter itself (fallback URI, status
 * codes that count as failures); this says what a route without a fallback answers when the call
 * ends in a failure: 503 when Stagger refused it (an open breaker, a spent budget, the throttle),
 * 504 when an attempt timed out, the failure itself otherwise.
 */
public final class StaggerCircuitBreakerFilterFactory extends SpringCloudCircuitBreakerFilterFactory {

    public StaggerCircuitBreakerFilterFactory(ReactiveCircuitBreakerFactory<?, ?> factory,
                                              ObjectProvider<DispatcherHandler> dispatcherHandler) {
        super(factory, dispatcherHandler);
    }

    @Override
    protected Mono<Void> handleErrorWithoutFallback(Throwable failure, boolean resumeWithoutError) {
        if (failure instanceof RetryRefusedException) {
            return Mono.error(new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE, failure.getMessage(), failure));
        }
        if (failure instanceof TimeoutException || failure instanceof AttemptTimeoutException) {
            return Mono.error(new ResponseStatusException(HttpStatus.GATEWAY_TIMEOUT, failure.getMessage(), failure));
        }
        return resumeWithoutError ? Mono.empty() : Mono.error(failure);
    }
}
