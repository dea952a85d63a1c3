package dev.stagger.spring.cloud;

import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.circuitbreaker.ConfigBuilder;

/**
 * What a Spring Cloud circuit breaker id runs on: the Stagger breaker it records into, and the
 * Stagger retry, if any, that retries its calls. Both are named instances of the
 * {@code StaggerRegistry}, so their settings live in {@code stagger.*} properties and their state
 * shows in Stagger's meters and actuator endpoints; this config only maps ids to names.
 *
 * <p>By default an id {@code x} runs on breaker {@code x} ({@code stagger.circuit-breakers.x},
 * else one built from {@code stagger.circuit-breakers.default} on first use) and, when
 * {@code stagger.retries.x} is configured, on retry {@code x} with that breaker. Several ids may
 * share one breaker. Immutable.
 */
public final class StaggerCircuitBreakerConfig {
    private final String circuitBreaker;
    private final @Nullable String retry;

    private StaggerCircuitBreakerConfig(Builder b) {
        this.circuitBreaker = b.circuitBreaker;
        this.retry = b.retry;
    }

    /** A config running on breaker {@code circuitBreaker}, without a retry. */
    public static Builder builder(String circuitBreaker) {
        return new Builder(circuitBreaker);
    }

    /** The name of the Stagger breaker the calls record into. */
    public String circuitBreaker() {
        return circuitBreaker;
    }

    /** The name of the Stagger retry that retries the calls, if any (none: one attempt per call). */
    public Optional<String> retry() {
        return Optional.ofNullable(retry);
    }

    /** A builder starting from this config. */
    public Builder toBuilder() {
        Builder b = new Builder(circuitBreaker);
        b.retry = retry;
        return b;
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof StaggerCircuitBreakerConfig c && c.circuitBreaker.equals(circuitBreaker) && Objects.equals(c.retry, retry);
    }

    @Override
    public int hashCode() {
        return Objects.hash(circuitBreaker, retry);
    }

    @Override
    public String toString() {
        return "StaggerCircuitBreakerConfig{circuitBreaker=" + circuitBreaker + (retry == null ? "" : ", retry=" + retry) + "}";
    }

    /** Builds a {@link StaggerCircuitBreakerConfig}; what Spring Cloud's {@code configure} hands out. */
    public static final class Builder implements ConfigBuilder<StaggerCircuitBreakerConfig> {
        private String circuitBreaker;
        private @Nullable String retry;

        private Builder(String circuitBreaker) {
            this.circuitBreaker = name("circuitBreaker", circuitBreaker);
        }

        /** Records into the Stagger breaker called {@code name}. */
        public Builder circuitBreaker(String name) {
            this.circuitBreaker = name("circuitBreaker", name);
            return this;
        }

        /**
         * Retries with the Stagger retry called {@code name} (its policy, budget and throttle),
         * guarded by this config's breaker.
         */
        public Builder retry(String name) {
            this.retry = name("retry", name);
            return this;
        }

        /** One attempt per call: the breaker alone. */
        public Builder noRetry() {
            this.retry = null;
            return this;
        }

        @Override
        public StaggerCircuitBreakerConfig build() {
            return new StaggerCircuitBreakerConfig(this);
        }

        private static String name(String field, @Nullable String value) {
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException(field + " must not be blank, got " + (value == null ? "null" : "'" + value + "'"));
            }
            return value;
        }
    }
}
