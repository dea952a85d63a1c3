package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The last good value per key, answered when a call fails: a fallback of kind "cache".
 * {@link #call} runs an operation under a {@link Retry}; a success is stored, and a call that
 * ends without success (breaker open, budget spent, deadline, attempts exhausted, a permanent
 * failure) answers with the value stored for its key, as long as it is no older than
 * {@code maxStaleness}. With nothing fresh enough the cache declines: the {@code Retry}'s own
 * fallback, if any, answers next ({@link Fallback#orElse}), else the call fails as it would have.
 * <pre>{@code
 * FallbackCache<String, Quote> quotes = FallbackCache.<String, Quote>builder("quotes")
 *         .maxSize(10_000).maxStaleness(Duration.ofMinutes(30)).build();
 * Cached<Quote> quote = quotes.call(retry, "ACME", () -> prices.fetch("ACME"));
 * if (quote.isStale()) {
 *     page.note("as of " + quote.age().toMinutes() + " minutes ago");
 * }
 * }</pre>
 *
 * <p>At most {@code maxSize} keys are kept; the least recently used is evicted first.
 *
 * <p><b>Ages</b> are measured on the cache's clock's monotonic time ({@link Clock#nanoTime()}),
 * so a wall clock stepped back or forward (NTP, an operator) neither makes an old value look new
 * nor a new one look expired; the wall time is kept only to show when a value was stored
 * ({@link Cached#storedAt()}).
 *
 * <p><b>Newest data wins, not the last call to finish.</b> Of two overlapping calls for one key,
 * the value kept is the one whose successful attempt started last: a slow call that began before
 * a faster one does not overwrite the newer value when it finishes. {@link #put} counts as
 * starting when it is called.
 *
 * <p>Thread-safe: every operation is linearizable (one short lock that guards only the map,
 * never held while calling out; the order of starts is an atomic counter).
 *
 * @param <K> the key's type (equals/hashCode)
 * @param <V> the value's type
 */
public final class FallbackCache<K, V> {
    private static final EndReason[] ANY_END = EnumSet.complementOf(
            EnumSet.of(EndReason.SUCCESS, EndReason.RECOVERED, EndReason.CANCELLED)).toArray(new EndReason[0]);

    private final String name;
    private final int maxSize;
    private final Duration maxStaleness;
    private final long maxStalenessNanos;
    private final Clock clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final LinkedHashMap<K, Entry<V>> entries;
    /** Numbers attempts (and puts) in the order they start: the later start holds the newer data. */
    private final AtomicLong starts = new AtomicLong();

    /**
     * A stored value: when on the monotonic clock (its age), when on the wall clock (for display
     * only), and the number of the start that fetched it.
     */
    private record Entry<V>(V value, long storedAtNanos, long storedAtMillis, long start) {
    }

    private FallbackCache(Builder<K, V> b) {
        this.name = b.name;
        this.maxSize = b.maxSize;
        this.maxStaleness = b.maxStaleness;
        this.maxStalenessNanos = Checks.nanos(b.maxStaleness);
        this.clock = b.clock;
        this.entries = new LeastRecentlyUsed<>(maxSize);
    }

    /** An access-ordered map that drops its least recently used entry once it holds more than {@code maxSize}. */
    private static final class LeastRecentlyUsed<K, V> extends LinkedHashMap<K, V> {
        private static final long serialVersionUID = 1L;
        private final int maxSize;

        LeastRecentlyUsed(int maxSize) {
            super(16, 0.75f, true);
            this.maxSize = maxSize;
        }

        @Override
        protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
            return size() > maxSize;
        }
    }

    public static <K, V> Builder<K, V> builder(String name) {
        return new Builder<>(Checks.notNull("name", name));
    }

    public Builder<K, V> toBuilder() {
        Builder<K, V> b = new Builder<>(name);
        b.maxSize = maxSize;
        b.maxStaleness = maxStaleness;
        b.clock = clock;
        return b;
    }

    public String name() {
        return name;
    }

    public int maxSize() {
        return maxSize;
    }

    public Duration maxStaleness() {
        return maxStaleness;
    }

    /**
     * Runs {@code operation} under {@code retry}: a success is answered fresh and stored under
     * {@code key} (unless the value of an attempt that started after this one's is stored already); a call that ends without success answers the stored value, stale, if it is
     * no older than {@code maxStaleness} (then {@code retry}'s own fallback, if any).
     */
    public Cached<V> call(Retry retry, K key, Callable<? extends V> operation) throws Exception {
        Checks.notNull("retry", retry);
        Checks.notNull("key", key);
        Checks.notNull("operation", operation);
        Outcome<V> outcome = new Outcome<>();
        V value = withCache(retry, key, outcome).call(() -> {
            outcome.start = starts.incrementAndGet();
            return operation.call();
        });
        return settle(key, value, outcome);
    }

    /** As {@link #call} for an asynchronous operation. */
    public CompletableFuture<Cached<V>> callAsync(Retry retry, K key, Supplier<? extends CompletionStage<V>> operation) {
        Checks.notNull("retry", retry);
        Checks.notNull("key", key);
        Checks.notNull("operation", operation);
        Outcome<V> outcome = new Outcome<>();
        return withCache(retry, key, outcome).callAsync(() -> {
            outcome.start = starts.incrementAndGet();
            return operation.get();
        }).thenApply(value -> settle(key, value, outcome));
    }

    /**
     * A fallback (kind "cache") answering the value stored under {@code key}, no older than
     * {@code maxStaleness}, and declining otherwise; for composing by hand. It does not store
     * successes: {@link #put} them, or use {@link #call}.
     */
    public Fallback<V> fallback(K key) {
        Checks.notNull("key", key);
        return Fallback.<V>make("cache", context -> {
            Cached<V> hit = lookup(key, context.reason());
            return hit == null ? Fallback.DECLINED : hit.value();
        });
    }

    /**
     * Stores {@code value} as the last good value for {@code key}, now; it replaces the value of
     * any call for the key that started before this put and finishes after it.
     */
    public void put(K key, V value) {
        Checks.notNull("key", key);
        Checks.notNull("value", value);
        store(key, value, starts.incrementAndGet());
    }

    /** Stores {@code value}, fetched by start number {@code start}, unless a later start's value is stored. */
    private void store(K key, V value, long start) {
        Entry<V> entry = new Entry<>(value, clock.nanoTime(), clock.currentTimeMillis(), start);
        lock.lock();
        try {
            entries.merge(key, entry, (stored, fetched) -> fetched.start > stored.start ? fetched : stored);
        } finally {
            lock.unlock();
        }
    }

    /** The value stored for {@code key} with its age, if there is one no older than {@code maxStaleness}. */
    public Optional<Cached<V>> get(K key) {
        Checks.notNull("key", key);
        return Optional.ofNullable(lookup(key, null));
    }

    /** Forgets {@code key}'s value. */
    public void invalidate(K key) {
        Checks.notNull("key", key);
        lock.lock();
        try {
            entries.remove(key);
        } finally {
            lock.unlock();
        }
    }

    /** Keys held now (values past their staleness included until evicted or replaced). */
    public int size() {
        lock.lock();
        try {
            return entries.size();
        } finally {
            lock.unlock();
        }
    }

    private @Nullable Entry<V> entry(K key) {
        lock.lock();
        try {
            return entries.get(key);
        } finally {
            lock.unlock();
        }
    }

    /** The value stored for {@code key} if it is no older than {@code maxStaleness}, answered for {@code reason}. */
    private @Nullable Cached<V> lookup(K key, @Nullable EndReason reason) {
        Entry<V> e = entry(key);
        if (e == null) {
            return null;
        }
        long age = Math.max(0, clock.nanoTime() - e.storedAtNanos);
        if (age > maxStalenessNanos) {
            return null;
        }
        return new Cached<>(e.value, Instant.ofEpochMilli(e.storedAtMillis), Duration.ofNanos(age), reason);
    }

    /** What happened to one call: whether it ended without success, and what the cache answered. */
    private static final class Outcome<V> {
        volatile boolean failed;
        volatile @Nullable EndReason reason;
        volatile @Nullable Cached<V> served;
        /** The start number of the call's latest attempt: the one whose value a success returns. */
        volatile long start;
    }

    private Retry withCache(Retry retry, K key, Outcome<V> outcome) {
        Fallback<V> mine = Fallback.<V>make("cache", context -> {
            outcome.failed = true;
            outcome.reason = context.reason();
            if (context.reason() == EndReason.INTERRUPTED) {
                return Fallback.DECLINED; // consulted only to learn the call failed: a stopped thread gets no answer
            }
            Cached<V> hit = lookup(key, context.reason());
            if (hit == null) {
                return Fallback.DECLINED;
            }
            outcome.served = hit;
            return hit.value();
        }).withReasons(ANY_END);
        @SuppressWarnings("unchecked")
        Fallback<V> own = (Fallback<V>) retry.fallback;
        return retry.withFallback(own == null ? mine : mine.orElse(own));
    }

    private Cached<V> settle(K key, V value, Outcome<V> outcome) {
        Cached<V> served = outcome.served;
        if (served != null) {
            return served;
        }
        long now = clock.currentTimeMillis();
        if (outcome.failed) {
            // answered by the retry's own fallback (or a retried result returned as it was): not stored
            return new Cached<>(value, Instant.ofEpochMilli(now), Duration.ZERO, outcome.reason);
        }
        if (value != null) {
            store(key, value, outcome.start);
        }
        return new Cached<>(value, Instant.ofEpochMilli(now), Duration.ZERO, null);
    }

    @Override
    public String toString() {
        return "FallbackCache{" + name + ", maxSize=" + maxSize + ", maxStaleness=" + maxStaleness + "}";
    }

    /** Configuration of a {@link FallbackCache}. Not thread-safe; {@link #build()} snapshots it. */
    public static final class Builder<K, V> {
        private final String name;
        private int maxSize = 1_000;
        private Duration maxStaleness = Duration.ofMinutes(10);
        private Clock clock = Clock.system();

        private Builder(String name) {
            this.name = name;
        }

        /** Keys kept at most; the least recently used is evicted first. Default 1000. */
        public Builder<K, V> maxSize(int maxSize) {
            this.maxSize = Checks.atLeast("maxSize", maxSize, 1);
            return this;
        }

        /** The oldest value ever answered. Default 10 minutes. */
        public Builder<K, V> maxStaleness(Duration maxStaleness) {
            this.maxStaleness = Checks.positive("maxStaleness", maxStaleness);
            return this;
        }

        /** The clock ages are measured on; a {@code VirtualClock} in tests. */
        public Builder<K, V> clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        public FallbackCache<K, V> build() {
            return new FallbackCache<>(this);
        }
    }
}
