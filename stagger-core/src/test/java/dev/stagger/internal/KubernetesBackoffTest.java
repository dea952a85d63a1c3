package dev.stagger.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RandomSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code Backoff.kubernetes} against apimachinery's {@code wait.Backoff.Step()}, corner by corner.
 * Each expected schedule is worked out by hand from Step()'s rules, in nanoseconds:
 * <ul>
 *   <li>{@code steps < 1}: sleep {@code D} (jittered); nothing changes;
 *   <li>otherwise {@code steps--}; if {@code factor != 0}, {@code next = int64(D·factor)} and, if
 *       {@code cap > 0 && next > cap}, {@code next = cap, steps = 0}; if {@code factor == 0},
 *       {@code next = D}; sleep {@code D} (jittered), then {@code D = next}.
 *   <li>jittered: {@code D + int64(r·jitter·D)} when {@code jitter > 0}, else {@code D}.
 * </ul>
 * So the sleep itself is never capped: only the next duration is.
 */
class KubernetesBackoffTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        // name | duration | factor | jitter | steps | cap | draw | sleeps (ns)
        "first duration above the cap: once uncapped, then the cap"
            + " | 10000000000 | 2   | 0   | 5  | 3000000000 | 0.5 | 10000000000 3000000000 3000000000 3000000000",
        "first duration above the cap, with jitter on both"
            + " | 10000000000 | 2   | 0.5 | 5  | 3000000000 | 0.5 | 12500000000 3750000000 3750000000 3750000000",
        "factor 1 above the cap: the cap from the second sleep"
            + " | 10000000000 | 1   | 0   | 5  | 3000000000 | 0.5 | 10000000000 3000000000 3000000000",
        "factor below 1, still above the cap after one step"
            + " | 10000000000 | 0.5 | 0   | 5  | 3000000000 | 0.5 | 10000000000 3000000000 3000000000",
        "factor below 1, under the cap after one step: keeps shrinking"
            + " | 10000000000 | 0.1 | 0   | 3  | 3000000000 | 0.5 | 10000000000 1000000000 100000000 10000000 10000000",
        "factor 0: the duration never changes, the cap is never applied"
            + " | 10000000000 | 0   | 0   | 5  | 3000000000 | 0.5 | 10000000000 10000000000 10000000000 10000000000 10000000000 10000000000 10000000000",
        "steps 0: the duration forever, even above the cap"
            + " | 10000000000 | 2   | 0   | 0  | 3000000000 | 0.5 | 10000000000 10000000000 10000000000",
        "steps 0 with jitter: jittered each time"
            + " | 1000        | 2   | 0.5 | 0  | 0          | 0.5 | 1250 1250 1250",
        "steps exhausted: the last duration stays"
            + " | 1000000000  | 2   | 0   | 3  | 0          | 0.5 | 1000000000 2000000000 4000000000 8000000000 8000000000 8000000000",
        "cap 0 means no cap"
            + " | 1000000000  | 10  | 0   | 4  | 0          | 0.5 | 1000000000 10000000000 100000000000 1000000000000 10000000000000 10000000000000",
        "a step landing exactly on the cap keeps stepping; the next is capped"
            + " | 1000000000  | 2   | 0   | 10 | 4000000000 | 0.5 | 1000000000 2000000000 4000000000 4000000000 4000000000",
        "each step truncates to whole nanoseconds"
            + " | 3           | 1.5 | 0   | 5  | 0          | 0.5 | 3 4 6 9 13 19 19",
        "factor 1 without a cap: the duration stays"
            + " | 7           | 1   | 0   | 2  | 0          | 0.5 | 7 7 7 7",
        "jitter is added after the step and never to the stored duration"
            + " | 10000000    | 5   | 0.1 | 4  | 0          | 0.5 | 10500000 52500000 262500000 1312500000 6562500000 6562500000",
        "jitter 1 under a cap: the cap plus all of its jitter"
            + " | 1000000000  | 3   | 1   | 10 | 5000000000 | 0.5 | 1500000000 4500000000 7500000000 7500000000",
        "factor 1 past 2^53: the product is rounded to a double, as in Go"
            + " | 9007199254740995 | 1 | 0 | 2 | 0          | 0.5 | 9007199254740995 9007199254740996 9007199254740996",
        "jitter truncates to whole nanoseconds"
            + " | 7           | 1   | 0.5 | 3  | 0          | 0.3 | 8 8 8 8",
    })
    void followsWaitBackoffStep(String name, long duration, double factor, double jitter, int steps, long cap,
                                double draw, String sleeps) {
        Backoff backoff = Backoff.kubernetes(Duration.ofNanos(duration), factor, jitter, steps, Duration.ofNanos(cap));
        List<Long> expected = Arrays.stream(sleeps.trim().split(" ")).map(Long::valueOf).toList();

        assertThat(schedule(backoff, draw, expected.size())).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        // name | duration | factor | jitter | steps | cap | largest sleep (ns)
        "the first duration, when it is above the cap      | 10000000000 | 2   | 0   | 5  | 3000000000 | 10000000000",
        "the first duration and its jitter                 | 10000000000 | 2   | 0.5 | 5  | 3000000000 | 15000000000",
        "the cap, reached from below                       | 1000000000  | 3   | 1   | 10 | 5000000000 | 10000000000",
        "the duration the steps end on, without a cap      | 1000000000  | 2   | 0   | 3  | 0          | 8000000000",
        "the duration, when steps are 0                    | 10000000000 | 2   | 0   | 0  | 3000000000 | 10000000000",
        "the duration, when the factor is 0                | 10000000000 | 0   | 0   | 5  | 3000000000 | 10000000000",
        "the duration, when the factor shrinks it          | 10000000000 | 0.1 | 0   | 3  | 3000000000 | 10000000000",
        "the truncated steps                               | 3           | 1.5 | 0   | 5  | 0          | 19",
        "the duration rounded up past 2^53 by factor 1     | 9007199254740995 | 1 | 0 | 2 | 0          | 9007199254740996",
    })
    void declaresTheLargestSleepItCanTakeAsItsCeiling(String name, long duration, double factor, double jitter,
                                                      int steps, long cap, long largest) {
        Backoff backoff = Backoff.kubernetes(Duration.ofNanos(duration), factor, jitter, steps, Duration.ofNanos(cap));

        assertThat(backoff.maxDelay()).isEqualTo(Duration.ofNanos(largest));
        assertThat(schedule(backoff, 0.999_999_999, 40)).allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(largest));
    }

    @Test
    void whereGoWouldOverflowTheScheduleSaturatesAtTheLargestNanosecondCount() {
        // Go's int64(float64) conversion of a product past 2^63 is implementation-defined; here it saturates
        Backoff backoff = Backoff.kubernetes(Duration.ofNanos(Long.MAX_VALUE / 2), 4, 0.5, 3, Duration.ZERO);

        assertThat(schedule(backoff, 0.5, 4)).containsExactly(
                Long.MAX_VALUE / 2 + (long) (0.25 * (Long.MAX_VALUE / 2)), Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE);
        assertThat(backoff.maxDelay()).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
    }

    @Test
    void eachCallStartsFromTheFirstDurationAgain() {
        Backoff backoff = Backoff.kubernetes(Duration.ofSeconds(10), 2, 0, 5, Duration.ofSeconds(3));

        assertThat(schedule(backoff, 0.5, 2)).containsExactly(10_000_000_000L, 3_000_000_000L);
        assertThat(schedule(backoff, 0.5, 2)).containsExactly(10_000_000_000L, 3_000_000_000L);
    }

    private static List<Long> schedule(Backoff backoff, double draw, int count) {
        Backoff.Schedule schedule = backoff.start(RandomSource.sequence(draw));
        List<Long> sleeps = new ArrayList<>();
        for (int retry = 1; retry <= count; retry++) {
            sleeps.add(schedule.nextDelayNanos(retry));
        }
        return sleeps;
    }
}
