package dev.stagger.observability.internal;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.observability.RetryMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/** An adaptive throttle's meters, all read from the throttle when the registry is scraped. */
public final class ThrottleMeters {
    private ThrottleMeters() {
    }

    /** Registers the throttle's probability and window gauges and its refusal counter. */
    public static void bind(MeterRegistry registry, Tags tags, AdaptiveThrottle throttle) {
        Gauge.builder(RetryMetrics.THROTTLE_PROBABILITY, throttle, AdaptiveThrottle::rejectionProbability)
                .description("Probability that the adaptive throttle refuses the next request")
                .tags(tags)
                .register(registry);
        Gauge.builder(RetryMetrics.THROTTLE_REQUESTS, throttle, t -> t.requests())
                .description("Requests counted in the adaptive throttle's window")
                .tags(tags)
                .register(registry);
        Gauge.builder(RetryMetrics.THROTTLE_ACCEPTS, throttle, t -> t.accepts())
                .description("Accepts counted in the adaptive throttle's window")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder(RetryMetrics.THROTTLE_REJECTIONS, throttle, t -> t.rejections())
                .description("Requests the adaptive throttle refused locally")
                .tags(tags)
                .register(registry);
    }
}
