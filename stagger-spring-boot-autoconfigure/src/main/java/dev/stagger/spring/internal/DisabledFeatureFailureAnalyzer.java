package dev.stagger.spring.internal;

import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;

/**
 * Explains a missing bean that Stagger creates only when a property turns its feature on
 * ({@code JobQueue} without {@code stagger.jobs.enabled=true}): Boot's own analysis only says that
 * a bean of that type was required. Registered in {@code META-INF/spring.factories}; runs before
 * Boot's analyzer of missing beans.
 */
public final class DisabledFeatureFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException>
        implements Ordered {
    /** The beans a feature switch creates, by type name, with the switch. */
    private static final Map<String, String> SWITCHES = Map.of(
            "dev.stagger.jobs.JobQueue", "stagger.jobs.enabled",
            "dev.stagger.spring.StaggerJobPools", "stagger.jobs.enabled",
            "dev.stagger.idempotency.IdempotencyStore", "stagger.idempotency.enabled");

    private final Environment environment;

    /** @param environment the failed application's (null: the switch is taken as off) */
    public DisabledFeatureFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
        ResolvableType type = cause.getResolvableType();
        Class<?> required = type != null ? type.resolve() : cause.getBeanType();
        if (required == null || !SWITCHES.containsKey(required.getName())) {
            return null;
        }
        String property = SWITCHES.get(required.getName());
        if (environment != null && environment.getProperty(property, Boolean.class, false)) {
            return null; // switched on: missing for another reason, which Boot's own analysis tells
        }
        String description = "A bean of type " + required.getName() + " was required, but Stagger creates it only when "
                + property + "=true, and that property is not set to true (the feature is off by default).";
        String action = "Set " + property + "=true to turn the feature on"
                + ("stagger.jobs.enabled".equals(property) ? " (jobs also need one DataSource bean, e.g. spring.datasource.url)" : "")
                + ", or stop injecting " + required.getSimpleName() + " where the feature is meant to stay off.";
        return new FailureAnalysis(description, action, cause);
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE; // before Boot's generic "required a bean" analysis
    }
}
