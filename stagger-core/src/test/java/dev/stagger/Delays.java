package dev.stagger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Reads schedules as lists of durations. */
final class Delays {
    private Delays() {
    }

    /** The first {@code count} waits of one call's schedule. */
    static List<Duration> firstDelays(Backoff backoff, RandomSource random, int count) {
        Backoff.Schedule schedule = backoff.start(random);
        List<Duration> delays = new ArrayList<>();
        for (int retry = 1; retry <= count; retry++) {
            delays.add(Duration.ofNanos(schedule.nextDelayNanos(retry)));
        }
        return delays;
    }

    static List<Duration> millis(long... values) {
        List<Duration> list = new ArrayList<>();
        for (long v : values) {
            list.add(Duration.ofMillis(v));
        }
        return list;
    }
}
