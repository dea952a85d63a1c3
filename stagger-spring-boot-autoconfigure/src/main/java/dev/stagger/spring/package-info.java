/**
 * Spring Boot auto-configuration: named retries, breakers and budgets from properties, {@code @StaggerRetry}, HTTP clients, metrics.
 */
@NullMarked
package dev.stagger.spring;

import org.jspecify.annotations.NullMarked;
