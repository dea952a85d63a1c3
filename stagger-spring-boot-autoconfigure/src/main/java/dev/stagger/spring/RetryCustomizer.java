package dev.stagger.spring;

import dev.stagger.Retry;

/**
 * Changes each {@link Retry} the {@link StaggerRegistry} creates (add a listener, a clock, ...),
 * before anybody uses it. Beans of this type are applied in their {@code @Order}; the starter's
 * own (meters, log lines, the actuator's counts) come first.
 */
@FunctionalInterface
public interface RetryCustomizer {
    Retry customize(Retry retry);
}
