package dev.stagger.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The timing wheel behind the system clock's scheduler, driven by explicit clock readings (or a
 * {@link VirtualClock}), so every firing is deterministic.
 */
class TimerWheelTest {
    private static final long TICK = TimerWheel.TICK_NANOS;

    /** A node that knows its name, for readable assertions. */
    static final class Named extends TimerWheel.Node {
        final String name;

        Named(String name) {
            this.name = name;
        }
    }

    private static List<String> names(TimerWheel.Node chain) {
        List<String> out = new ArrayList<>();
        for (TimerWheel.Node n = chain; n != null; n = n.nextExpired()) {
            out.add(((Named) n).name);
        }
        return out;
    }

    @Test
    void anEntryComesDueAtTheFirstTickBoundaryAtOrAfterItsDeadline() {
        TimerWheel wheel = new TimerWheel(0);
        wheel.add(new Named("a"), 0, 3 * TICK + 1); // due at 3 ticks + 1 ns, so at the start of tick 4

        assertThat(names(wheel.expire(3 * TICK + 1))).as("not before the tick boundary").isEmpty();
        assertThat(names(wheel.expire(4 * TICK - 1))).isEmpty();
        assertThat(names(wheel.expire(4 * TICK))).containsExactly("a");
        assertThat(wheel.size()).isZero();
    }

    @Test
    void anEntryExactlyOnATickBoundaryComesDueAtThatBoundary() {
        TimerWheel wheel = new TimerWheel(0);
        wheel.add(new Named("a"), 0, 5 * TICK);

        assertThat(names(wheel.expire(5 * TICK - 1))).isEmpty();
        assertThat(names(wheel.expire(5 * TICK))).containsExactly("a");
    }

    @Test
    void aZeroOrNegativeDelayComesDueAtTheNextTick() {
        TimerWheel wheel = new TimerWheel(0);
        wheel.add(new Named("zero"), 10 * TICK, 0);
        wheel.add(new Named("negative"), 10 * TICK, -5);

        assertThat(names(wheel.expire(10 * TICK + TICK))).containsExactlyInAnyOrder("zero", "negative");
    }

    @Test
    void entriesDueInDifferentTicksComeOutInTickOrder() {
        TimerWheel wheel = new TimerWheel(0);
        wheel.add(new Named("third"), 0, TimeUnit.SECONDS.toNanos(30));
        wheel.add(new Named("first"), 0, TimeUnit.MILLISECONDS.toNanos(2));
        wheel.add(new Named("second"), 0, TimeUnit.MILLISECONDS.toNanos(500));

        assertThat(names(wheel.expire(TimeUnit.MINUTES.toNanos(1)))).containsExactly("first", "second", "third");
    }

    @Test
    void aRemovedEntryNeverComesDueAndLeavesTheWheelAtOnce() {
        TimerWheel wheel = new TimerWheel(0);
        Named kept = new Named("kept");
        Named removed = new Named("removed");
        wheel.add(kept, 0, TimeUnit.MINUTES.toNanos(10));
        wheel.add(removed, 0, TimeUnit.MINUTES.toNanos(10));

        assertThat(wheel.remove(removed)).isTrue();

        assertThat(wheel.size()).isOne();
        assertThat(removed.isScheduled()).isFalse();
        assertThat(names(wheel.expire(TimeUnit.MINUTES.toNanos(11)))).containsExactly("kept");
    }

    @Test
    void removingTwiceOrAfterExpiryReportsFalse() {
        TimerWheel wheel = new TimerWheel(0);
        Named a = new Named("a");
        Named b = new Named("b");
        wheel.add(a, 0, TICK);
        wheel.add(b, 0, TICK * 100);
        wheel.remove(b);

        assertThat(wheel.remove(b)).isFalse();
        wheel.expire(TICK);
        assertThat(wheel.remove(a)).as("already handed out").isFalse();
    }

    @Test
    void aNodeCannotBeInTheWheelTwice() {
        TimerWheel wheel = new TimerWheel(0);
        Named a = new Named("a");
        wheel.add(a, 0, TICK);

        assertThatThrownBy(() -> wheel.add(a, 0, TICK)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aRemovedNodeCanBeAddedAgain() {
        TimerWheel wheel = new TimerWheel(0);
        Named a = new Named("a");
        wheel.add(a, 0, TimeUnit.HOURS.toNanos(1));
        wheel.remove(a);
        wheel.add(a, 0, TICK);

        assertThat(names(wheel.expire(TICK))).containsExactly("a");
    }

    @Test
    void delaysBeyondOneRotationOfEveryLevelComeDueOnTimeAndNotARotationEarly() {
        long[] delays = {
            63 * TICK, 64 * TICK, 65 * TICK,                     // around level 0's span (67 ms)
            4095 * TICK, 4096 * TICK, 4097 * TICK,               // level 1's (4.3 s)
            TimeUnit.MINUTES.toNanos(10),                        // the pending-retry case (level 3)
            TimeUnit.HOURS.toNanos(5),                           // past level 3 (4.9 h)
            TimeUnit.DAYS.toNanos(30),                           // level 4 and up
        };
        for (long delay : delays) {
            TimerWheel wheel = new TimerWheel(0);
            long start = 7 * TICK + 12345; // not on a boundary, so rounding is exercised
            wheel.add(new Named("x"), start, delay);
            long deadline = start + delay;
            long dueBoundary = ((deadline + TICK - 1) / TICK) * TICK;

            assertThat(wheel.expire(dueBoundary - 1)).as("delay %d ns: one nanosecond early", delay).isNull();
            assertThat(names(wheel.expire(dueBoundary))).as("delay %d ns", delay).containsExactly("x");
        }
    }

    @Test
    void aDelayPastTheEndOfTimeNeverComesDue() {
        TimerWheel wheel = new TimerWheel(0);
        wheel.add(new Named("never"), TimeUnit.DAYS.toNanos(1), Long.MAX_VALUE);

        assertThat(wheel.expire(Long.MAX_VALUE)).isNull();
        assertThat(wheel.size()).isOne();
    }

    @Test
    void aClockThatWrapsPastLongMaxValueIsHandled() {
        long origin = Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(1); // System.nanoTime() may sit anywhere
        TimerWheel wheel = new TimerWheel(origin);
        wheel.add(new Named("after the wrap"), origin, TimeUnit.SECONDS.toNanos(3));

        long twoSecondsLater = origin + TimeUnit.SECONDS.toNanos(2); // overflows to a negative reading
        assertThat(twoSecondsLater).isNegative();
        assertThat(wheel.expire(twoSecondsLater)).isNull();
        assertThat(names(wheel.expire(origin + TimeUnit.SECONDS.toNanos(3) + TICK))).containsExactly("after the wrap");
    }

    @Test
    void theNextEventIsTheEarliestDeadlineOrAnEarlierMoveDownALevel() {
        TimerWheel wheel = new TimerWheel(0);
        assertThat(wheel.nextEventTick()).as("empty").isEqualTo(Long.MAX_VALUE);

        wheel.add(new Named("near"), 0, 10 * TICK);
        assertThat(wheel.nextEventTick()).isEqualTo(10);

        TimerWheel far = new TimerWheel(0);
        far.add(new Named("far"), 0, 5000 * TICK); // level 2 at first: moved down at tick 4096
        assertThat(far.nextEventTick()).isLessThanOrEqualTo(5000);
        assertThat(far.nanosUntil(far.nextEventTick(), 0)).isEqualTo(far.nextEventTick() * TICK);
    }

    @Test
    void drivenByAVirtualClockTheWheelFiresAsTimeIsAdvanced() {
        VirtualClock clock = new VirtualClock(TimeUnit.HOURS.toNanos(3));
        TimerWheel wheel = new TimerWheel(clock.nanoTime());
        List<String> fired = new ArrayList<>();
        wheel.add(new Named("1s"), clock.nanoTime(), TimeUnit.SECONDS.toNanos(1));
        wheel.add(new Named("10min"), clock.nanoTime(), TimeUnit.MINUTES.toNanos(10));

        for (int second = 1; second <= 601; second++) {
            clock.advance(Duration.ofSeconds(1));
            fired.addAll(names(wheel.expire(clock.nanoTime())));
            if (second == 1) {
                assertThat(fired).as("after 1 s (+ up to one tick)").isEmpty();
            }
            if (second == 2) {
                assertThat(fired).containsExactly("1s");
            }
            if (second == 600) {
                assertThat(fired).as("10 min rounds up to the tick boundary just past it").containsExactly("1s");
            }
        }
        assertThat(fired).containsExactly("1s", "10min");
    }

    @Test
    void aSlotOfManyFarEntriesComesDownInBatchesWhoseEntriesStayRemovable() {
        TimerWheel wheel = new TimerWheel(0);
        List<Named> nodes = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            Named n = new Named("n" + i);
            nodes.add(n);
            wheel.add(n, 0, TimeUnit.MINUTES.toNanos(10)); // all in one far slot
        }
        long moveTick = wheel.nextEventTick(); // the slot's first move down a level
        long atMove = moveTick * TICK;

        assertThat(wheel.expire(atMove, 30)).as("not due yet: only moved").isNull();
        assertThat(wheel.isBehind()).isTrue();
        assertThat(wheel.nextEventTick()).as("the move goes on at once").isEqualTo(moveTick);
        Named stillMoving = nodes.get(99);
        assertThat(wheel.remove(stillMoving)).as("removable between batches").isTrue();
        while (wheel.isBehind()) {
            assertThat(wheel.expire(atMove, 30)).isNull();
        }

        assertThat(wheel.size()).isEqualTo(99);
        assertThat(names(wheel.expire(TimeUnit.MINUTES.toNanos(10) + TICK))).hasSize(99).doesNotContain("n99");
    }

    @Test
    void aMillionEntriesAddedAndRemovedLeaveTheWheelEmpty() {
        TimerWheel wheel = new TimerWheel(0);
        Named[] nodes = new Named[1_000_000];
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = new Named("n");
            wheel.add(nodes[i], i * 1000L, TimeUnit.MINUTES.toNanos(10));
        }
        for (Named n : nodes) {
            assertThat(wheel.remove(n)).isTrue();
        }

        assertThat(wheel.size()).isZero();
        assertThat(wheel.expire(TimeUnit.HOURS.toNanos(1))).isNull();
    }
}
