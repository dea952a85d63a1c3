/**
 * Spring Cloud CircuitBreaker on Stagger: {@code CircuitBreakerFactory} and
 * {@code ReactiveCircuitBreakerFactory} backed by the named breakers and retries of
 * {@code stagger.*} properties.
 */
@NullMarked
package dev.stagger.spring.cloud;

import org.jspecify.annotations.NullMarked;
