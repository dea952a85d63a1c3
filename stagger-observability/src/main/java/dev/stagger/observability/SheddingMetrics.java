package dev.stagger.observability;

import dev.stagger.shedding.LoadSheddingFilter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.util.Collections;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.function.ToDoubleFunction;

/**
 * Publishes what a {@link LoadSheddingFilter} is doing to a Micrometer {@link MeterRegistry}:
 * its concurrency limit, what is in flight under it, what it admits and sheds, and the
 * Retry-After it is advising. Everything is read from the filter when the registry is scraped;
 * nothing is recorded per request.
 *
 * <pre>{@code
 * LoadSheddingFilter shedding = LoadSheddingFilter.builder("api").build();
 * SheddingMetrics.of(registry).bind(shedding);
 * }</pre>
 *
 * <h2>Meters</h2>
 * Every meter carries the tag {@code name} (the filter's name) plus the binder's common tags.
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>Name</th><th>Type</th><th>Extra tags</th><th>Value</th></tr>
 *   <tr><td>{@value #LIMIT}</td><td>gauge</td><td></td><td>the concurrency limit now</td></tr>
 *   <tr><td>{@value #IN_FLIGHT}</td><td>gauge</td><td></td><td>requests admitted and not finished</td></tr>
 *   <tr><td>{@value #REQUESTS}</td><td>function counter</td><td>{@code outcome} = admitted | shed,
 *       {@code attempt} = first | retry</td><td>requests by what the filter did with them; {@code retry}
 *       is what the filter's {@link dev.stagger.shedding.RetryMarker} recognised</td></tr>
 *   <tr><td>{@value #RETRY_AFTER}</td><td>gauge, seconds</td><td></td><td>the Retry-After a request
 *       shed now would get, before jitter</td></tr>
 * </table>
 *
 * <p>Gauges and counters hold their filter weakly, as Micrometer's own binders do: keep a
 * reference to what you bind. Immutable configuration and thread-safe; binding the same filter
 * twice through one {@code SheddingMetrics} is a no-op.
 */
public final class SheddingMetrics {
    /** The concurrency limit, tagged {@code name}. */
    public static final String LIMIT = "stagger.shedding.limit";
    /** Requests in flight under the limit, tagged {@code name}. */
    public static final String IN_FLIGHT = "stagger.shedding.in.flight";
    /** Requests admitted and shed, tagged {@code name}, {@code outcome} and {@code attempt}. */
    public static final String REQUESTS = "stagger.shedding.requests";
    /** The Retry-After a shed request would get now, before jitter, in seconds. */
    public static final String RETRY_AFTER = "stagger.shedding.retry.after";

    private final MeterRegistry registry;
    private final Tags commonTags;
    private final Set<LoadSheddingFilter> bound = Collections.synchronizedSet(
            Collections.newSetFromMap(new WeakHashMap<>()));

    private SheddingMetrics(MeterRegistry registry, Tags commonTags) {
        this.registry = registry;
        this.commonTags = commonTags;
    }

    /** A binder publishing to {@code registry}. */
    public static SheddingMetrics of(MeterRegistry registry) {
        return new SheddingMetrics(Objects.requireNonNull(registry, "registry must not be null"), Tags.empty());
    }

    /** A binder that adds {@code tags} to every meter; keep their values few. */
    public SheddingMetrics withTags(Iterable<Tag> tags) {
        Objects.requireNonNull(tags, "tags must not be null");
        return new SheddingMetrics(registry, commonTags.and(tags));
    }

    /** Publishes the filter's meters. Idempotent per filter. */
    public void bind(LoadSheddingFilter filter) {
        Objects.requireNonNull(filter, "filter must not be null");
        if (!bound.add(filter)) {
            return;
        }
        Tags tags = commonTags.and("name", filter.name());
        Gauge.builder(LIMIT, filter, LoadSheddingFilter::limit)
                .description("Requests the load-shedding filter admits at once").tags(tags).register(registry);
        Gauge.builder(IN_FLIGHT, filter, LoadSheddingFilter::inFlight)
                .description("Requests admitted by the load-shedding filter and not finished").tags(tags).register(registry);
        Gauge.builder(RETRY_AFTER, filter, f -> f.retryAfter().getSeconds()).baseUnit("seconds")
                .description("Retry-After a request shed now would get, before jitter").tags(tags).register(registry);
        requests(filter, tags, "admitted", "first", LoadSheddingFilter::firstAttemptsAdmitted);
        requests(filter, tags, "admitted", "retry", LoadSheddingFilter::retriesAdmitted);
        requests(filter, tags, "shed", "first", LoadSheddingFilter::firstAttemptsShed);
        requests(filter, tags, "shed", "retry", LoadSheddingFilter::retriesShed);
    }

    private void requests(LoadSheddingFilter filter, Tags tags, String outcome, String attempt,
                          ToDoubleFunction<LoadSheddingFilter> count) {
        FunctionCounter.builder(REQUESTS, filter, count)
                .description("Requests the load-shedding filter admitted or shed")
                .tags(tags.and("outcome", outcome, "attempt", attempt)).register(registry);
    }

    @Override
    public String toString() {
        return "SheddingMetrics{" + registry.getClass().getSimpleName() + ", tags=" + commonTags + "}";
    }
}
