package dev.stagger.observability.internal;

import dev.stagger.RetryBudget;
import dev.stagger.observability.RetryMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/** A retry budget's meters, all read from the budget's own counters when the registry is scraped. */
public final class BudgetMeters {
    private BudgetMeters() {
    }

    /** Registers the budget's token gauge and its allowed and refused retry counters. */
    public static void bind(MeterRegistry registry, Tags tags, RetryBudget budget) {
        Gauge.builder(RetryMetrics.BUDGET_TOKENS, budget, RetryBudget::tokens)
                .description("Tokens left in the retry budget; retries are refused below 1")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder(RetryMetrics.BUDGET_RETRIES, budget, b -> b.retriesAllowed())
                .description("Retries the budget allowed")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder(RetryMetrics.BUDGET_REFUSALS, budget, b -> b.refusals())
                .description("Retries the budget refused")
                .tags(tags)
                .register(registry);
    }
}
