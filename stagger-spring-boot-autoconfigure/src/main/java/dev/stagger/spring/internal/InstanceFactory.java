package dev.stagger.spring.internal;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.Backoff;
import dev.stagger.Bulkhead;
import dev.stagger.BackoffSpec;
import dev.stagger.CircuitBreaker;
import dev.stagger.Clock;
import dev.stagger.HedgePolicy;
import dev.stagger.RetryBudget;
import dev.stagger.RetryPolicy;
import dev.stagger.spring.StaggerBulkheadProperties.BulkheadProperties;
import dev.stagger.spring.StaggerProperties;
import dev.stagger.spring.StaggerProperties.BackoffProperties;
import dev.stagger.spring.StaggerProperties.BudgetProperties;
import dev.stagger.spring.StaggerProperties.CircuitBreakerProperties;
import dev.stagger.spring.StaggerProperties.HedgeProperties;
import dev.stagger.spring.StaggerProperties.RetryProperties;
import dev.stagger.spring.StaggerProperties.ThrottleProperties;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;

/**
 * Builds Stagger's objects from {@code stagger.*} properties: each named entry is bound on top of
 * its map's {@code default} entry, then handed to Stagger's own builders, whose checks decide what
 * is valid (a refusal names the property and the value). No rule is repeated here.
 */
public final class InstanceFactory {
    private final Binder binder;
    private final Clock clock;
    private final BreakerFailures breakerFailures = new BreakerFailures();

    public Clock clock() {
        return clock;
    }

    public InstanceFactory(Binder binder, Clock clock) {
        this.binder = binder;
        this.clock = clock;
    }

    /** What each breaker built here counts as a failure besides exceptions (HTTP clients add theirs). */
    public BreakerFailures breakerFailures() {
        return breakerFailures;
    }

    /** The entry {@code name} of the map at {@code prefix}, on top of its {@code default} entry. */
    public <T> T merged(String prefix, String name, Supplier<T> fresh) {
        T value = fresh.get();
        binder.bind(prefix + "." + StaggerProperties.DEFAULT, Bindable.ofInstance(value));
        if (!StaggerProperties.DEFAULT.equals(name)) {
            binder.bind(key(prefix, name), Bindable.ofInstance(value));
        }
        return value;
    }

    /** The property name of entry {@code name} in the map at {@code prefix}. */
    public static String key(String prefix, String name) {
        return name.matches("[a-z0-9-]+") ? prefix + "." + name : prefix + "[" + name + "]";
    }

    public RetryProperties retryProperties(String name) {
        return merged("stagger.retries", name, RetryProperties::new);
    }

    public RetryPolicy policy(String name, RetryProperties p) {
        String at = key("stagger.retries", name) + ".";
        RetryPolicy.Builder b;
        if (p.getPreset() == null) {
            b = RetryPolicy.builder();
        } else {
            switch (p.getPreset().toLowerCase(Locale.ROOT)) {
                case "interactive" -> b = RetryPolicy.interactive().toBuilder();
                case "background" -> b = RetryPolicy.background().toBuilder();
                default -> throw PropertyCheck.invalid(at + "preset", p.getPreset(), "preset must be interactive or background");
            }
        }
        RetryPolicy.Builder builder = b;
        PropertyCheck.apply(at + "max-attempts", p.getMaxAttempts(), builder::maxAttempts);
        Backoff backoff = backoff(at + "backoff.", p.getBackoff());
        if (backoff != null) {
            builder.backoff(backoff);
        }
        PropertyCheck.apply(at + "deadline", p.getDeadline(), builder::deadline);
        PropertyCheck.apply(at + "attempt-timeout", p.getAttemptTimeout(), builder::attemptTimeout);
        if (!p.getRetryOn().isEmpty()) {
            @SuppressWarnings("unchecked")
            Class<? extends Throwable>[] types = (Class<? extends Throwable>[]) p.getRetryOn().toArray(new Class<?>[0]);
            PropertyCheck.apply(at + "retry-on", types, builder::retryOn);
        }
        if (!p.getAbortOn().isEmpty()) {
            @SuppressWarnings("unchecked")
            Class<? extends Throwable>[] types = (Class<? extends Throwable>[]) p.getAbortOn().toArray(new Class<?>[0]);
            PropertyCheck.apply(at + "abort-on", types, builder::abortOn);
        }
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw PropertyCheck.invalid(at.substring(0, at.length() - 1), name, e.getMessage());
        }
    }

    /**
     * The configured backoff, or null when nothing under {@code backoff} is set (the policy's default
     * stays). Names, defaults and checks are stagger-core's {@link BackoffSpec}: a field not set keeps
     * {@link RetryPolicy#DEFAULT_BACKOFF}'s value.
     */
    @Nullable Backoff backoff(String at, BackoffProperties p) {
        if (p.getType() == null && p.getBase() == null && p.getMultiplier() == null && p.getStep() == null
                && p.getMaxDelay() == null && p.getJitter() == null && p.getJitterFactor() == null) {
            return null;
        }
        BackoffSpec[] spec = {BackoffSpec.defaults()};
        PropertyCheck.apply(at + "type", p.getType(), v -> spec[0] = spec[0].withType(v));
        PropertyCheck.apply(at + "base", p.getBase(), v -> spec[0] = spec[0].withBase(v));
        PropertyCheck.apply(at + "multiplier", p.getMultiplier(), v -> spec[0] = spec[0].withMultiplier(v));
        PropertyCheck.apply(at + "step", p.getStep(), v -> spec[0] = spec[0].withStep(v));
        PropertyCheck.apply(at + "max-delay", p.getMaxDelay(), v -> spec[0] = spec[0].withMaxDelay(v));
        PropertyCheck.apply(at + "jitter", p.getJitter(), v -> spec[0] = spec[0].withJitter(v));
        PropertyCheck.apply(at + "jitter-factor", p.getJitterFactor(), v -> spec[0] = spec[0].withJitterFactor(v));
        try {
            return spec[0].toBackoff();
        } catch (IllegalArgumentException e) { // the one rule across fields: a decorrelated cap below its base
            throw PropertyCheck.invalid(at + "max-delay",
                    p.getMaxDelay() != null ? p.getMaxDelay() : RetryPolicy.DEFAULT_BACKOFF.maxDelay(), e.getMessage());
        }
    }

    public CircuitBreaker.Builder circuitBreaker(String name) {
        CircuitBreakerProperties p = merged("stagger.circuit-breakers", name, CircuitBreakerProperties::new);
        String at = key("stagger.circuit-breakers", name) + ".";
        CircuitBreaker.Builder b = CircuitBreaker.builder(name).clock(clock).failurePredicate(breakerFailures.of(name));
        PropertyCheck.apply(at + "failure-rate-threshold", p.getFailureRateThreshold(), b::failureRateThreshold);
        PropertyCheck.apply(at + "minimum-calls", p.getMinimumCalls(), b::minimumCalls);
        PropertyCheck.apply(at + "consecutive-failures", p.getConsecutiveFailures(), b::consecutiveFailures);
        PropertyCheck.apply(at + "window", p.getWindow(), b::window);
        PropertyCheck.apply(at + "open-duration", p.getOpenDuration(), b::openDuration);
        PropertyCheck.apply(at + "half-open-permits", p.getHalfOpenPermits(), b::halfOpenPermits);
        PropertyCheck.apply(at + "slow-call-threshold", p.getSlowCallThreshold(), b::slowCallThreshold);
        breakerFailures.exceptions(name, throwables(at + "record-exceptions", p.getRecordExceptions()),
                throwables(at + "ignore-exceptions", p.getIgnoreExceptions()));
        return b;
    }

    /** {@code types}, each checked to be a Throwable: the binder checks only that the class exists. */
    private static List<Class<? extends Throwable>> throwables(String property, List<Class<? extends Throwable>> types) {
        for (Class<?> t : types) {
            if (!Throwable.class.isAssignableFrom(t)) {
                throw PropertyCheck.invalid(property, t.getName(), "not an exception class");
            }
        }
        return types;
    }

    public RetryBudget budget(String name) {
        BudgetProperties p = merged("stagger.budgets", name, BudgetProperties::new);
        String at = key("stagger.budgets", name) + ".";
        RetryBudget.Builder b = RetryBudget.builder(name).clock(clock);
        PropertyCheck.apply(at + "ratio", p.getRatio(), b::ratio);
        PropertyCheck.apply(at + "max-tokens", p.getMaxTokens(), b::maxTokens);
        PropertyCheck.apply(at + "min-retries-per-second", p.getMinRetriesPerSecond(), b::minRetriesPerSecond);
        return b.build();
    }

    public HedgePolicy hedge(String name) {
        HedgeProperties p = merged("stagger.hedges", name, HedgeProperties::new);
        String at = key("stagger.hedges", name) + ".";
        HedgePolicy.Builder b = HedgePolicy.builder();
        PropertyCheck.apply(at + "delay", p.getDelay(), b::delay);
        PropertyCheck.apply(at + "percentile", p.getPercentile(), b::percentile);
        PropertyCheck.apply(at + "floor", p.getFloor(), b::floor);
        PropertyCheck.apply(at + "warmup", p.getWarmup(), b::warmup);
        PropertyCheck.apply(at + "window", p.getWindow(), b::window);
        PropertyCheck.apply(at + "max-hedges", p.getMaxHedges(), b::maxHedges);
        PropertyCheck.apply(at + "max-slow-share", p.getMaxSlowShare(), b::maxSlowShare);
        try {
            return b.build();
        } catch (IllegalArgumentException e) { // the one rule across fields: a delay is required
            throw PropertyCheck.invalid(at + "delay", p.getDelay(), e.getMessage());
        }
    }

    /**
     * {@code policy} hedging with {@code hedge}; a refusal (a hedged policy needs at least 2
     * attempts) is reported as property {@code property} with {@code value}.
     */
    public static RetryPolicy hedged(RetryPolicy policy, HedgePolicy hedge, String property, String value) {
        try {
            return policy.toBuilder().hedge(hedge).build();
        } catch (IllegalArgumentException e) {
            throw PropertyCheck.invalid(property, value, e.getMessage());
        }
    }

    /** The names configured in the map at {@code prefix}, {@code default} left out. */
    public Set<String> names(String prefix) {
        Set<String> names = new TreeSet<>(binder.bind(prefix, Bindable.mapOf(String.class, Object.class))
                .orElse(Map.of()).keySet());
        names.remove(StaggerProperties.DEFAULT);
        return names;
    }

    public Bulkhead bulkhead(String name) {
        BulkheadProperties p = merged("stagger.bulkheads", name, BulkheadProperties::new);
        String at = key("stagger.bulkheads", name) + ".";
        Bulkhead.Builder b = Bulkhead.builder(name).clock(clock);
        PropertyCheck.apply(at + "max-concurrent", p.getMaxConcurrent(), b::maxConcurrent);
        PropertyCheck.apply(at + "min-concurrent", p.getMinConcurrent(), b::minConcurrent);
        PropertyCheck.apply(at + "max-wait", p.getMaxWait(), b::maxWait);
        PropertyCheck.apply(at + "latency-threshold", p.getLatencyThreshold(), b::adaptive);
        try {
            return b.build();
        } catch (IllegalArgumentException e) { // the one rule across fields: min-concurrent above max-concurrent
            throw PropertyCheck.invalid(at + "min-concurrent", p.getMinConcurrent(), e.getMessage());
        }
    }

    public AdaptiveThrottle throttle(String name) {
        ThrottleProperties p = merged("stagger.throttles", name, ThrottleProperties::new);
        String at = key("stagger.throttles", name) + ".";
        AdaptiveThrottle.Builder b = AdaptiveThrottle.builder(name).clock(clock);
        PropertyCheck.apply(at + "k", p.getK(), b::k);
        PropertyCheck.apply(at + "window", p.getWindow(), b::window);
        PropertyCheck.apply(at + "buckets", p.getBuckets(), b::buckets);
        return b.build();
    }
}
