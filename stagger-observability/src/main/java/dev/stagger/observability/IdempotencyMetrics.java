package dev.stagger.observability;

import dev.stagger.idempotency.IdempotencyCompletion;
import dev.stagger.idempotency.IdempotencyListener;
import dev.stagger.idempotency.IdempotencyOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.util.Locale;

/**
 * Publishes what the idempotency filter and store do to a Micrometer {@link MeterRegistry}:
 * replays, in-flight conflicts, reused keys, takeovers and first executions, what became of each
 * executed response, and the scheduled purges. One instance is the listener; wire it in one line
 * on the filter (and on the store, for purges):
 *
 * <pre>{@code
 * IdempotencyMetrics metrics = IdempotencyMetrics.of(registry);
 * IdempotencyFilter filter = IdempotencyFilter.builder(store).idempotencyListener(metrics).build();
 * }</pre>
 *
 * <h2>Meters</h2>
 * Named like {@link RetryMetrics}'s; tag values are the enum constants in lower case, so the
 * number of series is fixed (never a key, a client, a route or a status).
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>Name</th><th>Type</th><th>Tags</th><th>Counts</th></tr>
 *   <tr><td>{@value #REQUESTS}</td><td>counter</td><td>{@code outcome} = executed | took_over | replayed |
 *       in_flight | key_reused | key_missing | key_invalid | no_client_scope | body_too_large |
 *       store_unavailable</td><td>requests that carried or needed a key, by what the filter did</td></tr>
 *   <tr><td>{@value #COMPLETIONS}</td><td>counter</td><td>{@code result} = stored | released | failed |
 *       not_stored | lease_lost | store_failed</td><td>executed requests, by what became of the response;
 *       {@code lease_lost} means a slow request was taken over and may have run twice</td></tr>
 *   <tr><td>{@value #PURGED}</td><td>counter</td><td></td><td>expired records removed by the purge schedule</td></tr>
 *   <tr><td>{@value #PURGE_FAILURES}</td><td>counter</td><td></td><td>scheduled purges that failed</td></tr>
 * </table>
 * Every series exists from the start at zero, so ratios (replays over requests, say) are defined
 * before the first event. Recording an event is an array index and a counter increment.
 *
 * <p>Immutable and thread-safe. Two instances on one registry with the same tags share the meters.
 */
public final class IdempotencyMetrics implements IdempotencyListener {
    /** Keyed requests, tagged {@code outcome}. */
    public static final String REQUESTS = "stagger.idempotency.requests";
    /** Executed requests, tagged {@code result}. */
    public static final String COMPLETIONS = "stagger.idempotency.completions";
    /** Expired records removed by the purge schedule. */
    public static final String PURGED = "stagger.idempotency.purged";
    /** Scheduled purges that failed. */
    public static final String PURGE_FAILURES = "stagger.idempotency.purge.failures";

    private static final IdempotencyOutcome[] OUTCOMES = IdempotencyOutcome.values();
    private static final IdempotencyCompletion[] COMPLETION_RESULTS = IdempotencyCompletion.values();

    private final MeterRegistry registry;
    private final Tags tags;
    private final Counter[] requests = new Counter[OUTCOMES.length];
    private final Counter[] completions = new Counter[COMPLETION_RESULTS.length];
    private final Counter purged;
    private final Counter purgeFailures;

    private IdempotencyMetrics(MeterRegistry registry, Tags tags) {
        this.registry = registry;
        this.tags = tags;
        for (IdempotencyOutcome o : OUTCOMES) {
            requests[o.ordinal()] = Counter.builder(REQUESTS)
                    .description("Requests that carried or needed an Idempotency-Key, by what the filter did")
                    .tags(tags).tag("outcome", tag(o))
                    .register(registry);
        }
        for (IdempotencyCompletion c : COMPLETION_RESULTS) {
            completions[c.ordinal()] = Counter.builder(COMPLETIONS)
                    .description("Requests executed under a key, by what became of the response")
                    .tags(tags).tag("result", tag(c))
                    .register(registry);
        }
        purged = Counter.builder(PURGED).description("Expired idempotency records removed by the purge schedule")
                .baseUnit("records").tags(tags).register(registry);
        purgeFailures = Counter.builder(PURGE_FAILURES).description("Scheduled idempotency purges that failed")
                .tags(tags).register(registry);
    }

    /** Meters on {@code registry}, created now. */
    public static IdempotencyMetrics of(MeterRegistry registry) {
        if (registry == null) {
            throw new NullPointerException("registry must not be null");
        }
        return new IdempotencyMetrics(registry, Tags.empty());
    }

    /**
     * Meters that also carry {@code tags} (say {@code api=payments} for a service with two
     * filters). Keep their values few: every distinct value multiplies the series.
     */
    public IdempotencyMetrics withTags(Iterable<Tag> tags) {
        if (tags == null) {
            throw new NullPointerException("tags must not be null");
        }
        return new IdempotencyMetrics(registry, this.tags.and(tags));
    }

    /** The tag value of a constant: its name in lower case ({@code took_over}). */
    static String tag(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public void decided(IdempotencyOutcome outcome, String method, String route) {
        requests[outcome.ordinal()].increment();
    }

    @Override
    public void completed(IdempotencyCompletion completion, String method, String route, int status) {
        completions[completion.ordinal()].increment();
    }

    @Override
    public void purged(long removed) {
        purged.increment(removed);
    }

    @Override
    public void purgeFailed(RuntimeException error) {
        purgeFailures.increment();
    }

    @Override
    public String toString() {
        return "IdempotencyMetrics{" + registry.getClass().getSimpleName() + ", tags=" + tags + "}";
    }
}
