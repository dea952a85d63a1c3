package dev.stagger.observability.internal;

import dev.stagger.Bulkhead;
import dev.stagger.observability.RetryMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/** A bulkhead's meters, all read from the bulkhead when the registry is scraped. */
public final class BulkheadMeters {
    private BulkheadMeters() {
    }

    /** Registers the bulkhead's in-flight, limit and queue gauges and its refusal counter. */
    public static void bind(MeterRegistry registry, Tags tags, Bulkhead bulkhead) {
        Gauge.builder(RetryMetrics.BULKHEAD_IN_FLIGHT, bulkhead, Bulkhead::inFlight)
                .description("Permits of the bulkhead held now")
                .tags(tags)
                .register(registry);
        Gauge.builder(RetryMetrics.BULKHEAD_LIMIT, bulkhead, Bulkhead::limit)
                .description("The bulkhead's limit of calls in flight now")
                .tags(tags)
                .register(registry);
        Gauge.builder(RetryMetrics.BULKHEAD_WAITING, bulkhead, Bulkhead::waiting)
                .description("Callers queued for a permit of the bulkhead")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder(RetryMetrics.BULKHEAD_REFUSALS, bulkhead, Bulkhead::refusals)
                .description("Attempts the bulkhead refused")
                .tags(tags)
                .register(registry);
    }
}
