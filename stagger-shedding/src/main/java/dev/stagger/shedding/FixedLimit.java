package dev.stagger.shedding;

/** A constant concurrency limit, made by {@link Limit#fixed(int)}. Immutable. */
public final class FixedLimit implements Limit {
    private final int limit;

    FixedLimit(int limit) {
        this.limit = limit;
    }

    /** The number of requests that may be in flight at once. */
    public int limit() {
        return limit;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FixedLimit && ((FixedLimit) o).limit == limit;
    }

    @Override
    public int hashCode() {
        return limit;
    }

    @Override
    public String toString() {
        return "FixedLimit{" + limit + "}";
    }
}
