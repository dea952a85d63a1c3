package dev.stagger.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The delay levels of a queue consumer that retries through delay queues or topics (RabbitMQ's
 * {@code <queue>.stagger.delay-<ms>ms}, Kafka's {@code <topic>.stagger.retry-<ms>}): one place for
 * the default series, what a valid list of levels is, and which level a delay waits in. Every
 * message in one level waits the same time, so none waits behind a longer one; the spacing of the
 * levels is the timing tolerance. Immutable.
 */
public final class DelayLevels {
    /** The most levels a consumer may have. */
    public static final int MAX_LEVELS = 100;

    private DelayLevels() {
    }

    /** The default levels: a 1-2-5 series from 20 ms to 1 hour, 18 levels. */
    public static List<Duration> defaults() {
        return List.of(Duration.ofMillis(20), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(200),
                Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5),
                Duration.ofSeconds(10), Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofMinutes(1),
                Duration.ofMinutes(2), Duration.ofMinutes(5), Duration.ofMinutes(10), Duration.ofMinutes(20),
                Duration.ofMinutes(30), Duration.ofHours(1));
    }

    /**
     * {@code levels} checked and sorted: 1 to {@value #MAX_LEVELS} levels, each whole milliseconds
     * of at least 1 ms, none twice.
     *
     * @throws IllegalArgumentException naming {@code field} and the bad value
     */
    public static List<Duration> check(String field, List<Duration> levels) {
        Objects.requireNonNull(levels, field + " must not be null");
        if (levels.isEmpty() || levels.size() > MAX_LEVELS) {
            throw new IllegalArgumentException(field + " must have 1 to " + MAX_LEVELS + " levels, got " + levels.size());
        }
        List<Duration> sorted = new ArrayList<>(levels);
        for (Duration d : sorted) {
            Objects.requireNonNull(d, field + " must not contain null");
            if (d.toMillis() < 1 || d.toNanos() % 1_000_000 != 0) {
                throw new IllegalArgumentException(field + " must be whole milliseconds of at least 1 ms, got " + d);
            }
        }
        sorted.sort(null);
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).equals(sorted.get(i - 1))) {
                throw new IllegalArgumentException(field + " must not repeat a level, got " + sorted.get(i) + " twice");
            }
        }
        return List.copyOf(sorted);
    }

    /** {@code levels} as milliseconds, in their order. */
    public static long[] millis(List<Duration> levels) {
        return levels.stream().mapToLong(Duration::toMillis).toArray();
    }

    /**
     * The level a delay of {@code delayMillis} (> 0) waits in: the smallest level at least as long,
     * so the message arrives no earlier than due; past the largest level, the largest (the message
     * is then delayed again for what remains when it comes back).
     *
     * @param levelsMillis the levels, strictly ascending
     */
    public static long levelFor(long[] levelsMillis, long delayMillis) {
        for (long level : levelsMillis) {
            if (level >= delayMillis) {
                return level;
            }
        }
        return levelsMillis[levelsMillis.length - 1];
    }
}
