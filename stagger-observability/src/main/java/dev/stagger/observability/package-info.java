/**
 * Listeners that turn Stagger's events into log lines ({@link dev.stagger.observability.RetryLog}) and Micrometer meters
 * ({@link dev.stagger.observability.RetryMetrics} and the module-specific telemetry).
 */
@NullMarked
package dev.stagger.observability;

import org.jspecify.annotations.NullMarked;
