package dev.stagger;

/**
 * A retry ran inside another Stagger retry while one of them refuses nesting
 * ({@link Nesting#REFUSE}). Thrown before the inner retry's first attempt; never retried.
 */
public final class RetryNestingException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String inner;
    private final String outer;

    RetryNestingException(String inner, String outer, String refusing) {
        super("retry '" + inner + "' runs inside retry '" + outer + "', and retry '" + refusing
                + "' refuses nesting (Nesting.REFUSE)");
        this.inner = inner;
        this.outer = outer;
    }

    /** The retry that was called inside the other. */
    public String inner() {
        return inner;
    }

    /** The retry whose attempt was running. */
    public String outer() {
        return outer;
    }
}
