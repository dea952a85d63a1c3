package dev.stagger;

import org.jspecify.annotations.Nullable;

/** The retry budget refused a retry: retries are already too large a share of traffic. */
public class BudgetExhaustedException extends RetryRefusedException {
    private static final long serialVersionUID = 1L;

    public BudgetExhaustedException(String budget, @Nullable Throwable cause, @Nullable Object lastResult) {
        super(EndReason.BUDGET, "retry budget '" + budget + "' exhausted", cause, lastResult);
    }
}
