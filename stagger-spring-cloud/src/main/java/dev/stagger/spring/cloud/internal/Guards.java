package dev.stagger.spring.cloud.internal;

import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.spring.StaggerRegistry;
import dev.stagger.spring.cloud.StaggerCircuitBreakerConfig;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The Stagger instances each Spring Cloud id runs on, shared by the blocking and the reactive
 * factory: resolved from the registry once per id and config (Spring Cloud code often calls
 * {@code create(id)} per request), again when the id's config changes. Thread-safe.
 */
public final class Guards {
    /**
     * What one id runs on.
     *
     * @param retry the retry (guarded by {@code breaker}), or null: the breaker alone
     */
    public record Guard(StaggerCircuitBreakerConfig config, CircuitBreaker breaker, @Nullable Retry retry) {
    }

    private final StaggerRegistry registry;
    private final Map<String, Guard> byId = new ConcurrentHashMap<>();
    private volatile Function<String, StaggerCircuitBreakerConfig> defaults;

    public Guards(StaggerRegistry registry) {
        this.registry = registry;
        this.defaults = this::byName;
    }

    /** The built-in mapping: breaker {@code id}, and retry {@code id} when the registry has one of that name. */
    private StaggerCircuitBreakerConfig byName(String id) {
        StaggerCircuitBreakerConfig.Builder b = StaggerCircuitBreakerConfig.builder(id);
        return registry.findRetry(id).isPresent() ? b.retry(id).build() : b.build();
    }

    /** Replaces the mapping of the ids no {@code configure} call named (Spring Cloud's {@code configureDefault}). */
    public void defaults(Function<String, StaggerCircuitBreakerConfig> defaults) {
        this.defaults = Objects.requireNonNull(defaults, "defaultConfiguration");
    }

    /** A builder for {@code id} starting from its default mapping (Spring Cloud's {@code configBuilder}). */
    public StaggerCircuitBreakerConfig.Builder builder(String id) {
        return defaults.apply(id).toBuilder();
    }

    /** What {@code id} runs on: its config in {@code configured}, else (kept there) its default mapping. */
    public Guard guard(String id, Map<String, StaggerCircuitBreakerConfig> configured) {
        StaggerCircuitBreakerConfig config = configured.computeIfAbsent(id, defaults);
        Guard g = byId.get(id);
        if (g != null && g.config() == config) {
            return g;
        }
        Guard resolved = resolve(config);
        byId.put(id, resolved);
        return resolved;
    }

    private Guard resolve(StaggerCircuitBreakerConfig config) {
        CircuitBreaker breaker = registry.circuitBreakerOrDefault(config.circuitBreaker());
        Retry retry = null;
        if (config.retry().isPresent()) {
            Retry named = registry.retry(config.retry().get());
            retry = named.circuitBreaker().orElse(null) == breaker ? named : named.withCircuitBreaker(breaker);
        }
        return new Guard(config, breaker, retry);
    }
}
