package dev.stagger.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * For any mix of adds (delays from zero to days), removes and time steps of any size: every entry
 * not removed comes out exactly once, never before the tick boundary at or after its deadline, and
 * no later than the first expiry a tick past that boundary (a delay of zero comes due at the next
 * tick, so the boundary itself may already have been processed when it was added) — also when
 * time is processed in small batches with removals between them.
 */
class TimerWheelPropertiesTest {
    private static final long TICK = TimerWheel.TICK_NANOS;

    /** One step: add an entry with this delay, remove the {@code n}-th added, or move time on. */
    record Step(int kind, long amount) {
    }

    static final class Entry extends TimerWheel.Node {
        final long deadline;
        boolean removed;
        long firedAt = -1;

        Entry(long deadline) {
            this.deadline = deadline;
        }
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Long> delay = Arbitraries.oneOf(
                Arbitraries.longs().between(0, 200 * TICK),
                Arbitraries.longs().between(0, 10_000 * TICK),
                Arbitraries.longs().between(0, 86_400_000_000_000L));
        Arbitrary<Long> step = Arbitraries.oneOf(
                Arbitraries.longs().between(0, 3 * TICK),
                Arbitraries.longs().between(0, 5_000 * TICK),
                Arbitraries.longs().between(0, 20_000_000_000_000L));
        Arbitrary<Step> one = Arbitraries.integers().between(0, 2).flatMap(kind -> switch (kind) {
            case 0 -> delay.map(d -> new Step(0, d));
            case 1 -> Arbitraries.longs().between(0, 1000).map(n -> new Step(1, n));
            default -> step.map(s -> new Step(2, s));
        });
        return one.list().ofMaxSize(300);
    }

    @Property(tries = 300)
    void everyEntryComesOutOnceAtItsTickBoundaryNeverEarly(@ForAll("steps") List<Step> steps,
                                                            @ForAll long origin,
                                                            @ForAll @IntRange(min = 1, max = 6) int batch) {
        TimerWheel wheel = new TimerWheel(origin);
        List<Entry> added = new ArrayList<>();
        Map<TimerWheel.Node, Integer> seen = new HashMap<>();
        long now = 0; // time since origin
        List<Long> expiries = new ArrayList<>();
        for (Step s : steps) {
            switch (s.kind()) {
                case 0 -> {
                    Entry e = new Entry(now + s.amount());
                    wheel.add(e, origin + now, s.amount());
                    added.add(e);
                }
                case 1 -> {
                    if (!added.isEmpty()) {
                        Entry e = added.get((int) (s.amount() % added.size()));
                        boolean wasScheduled = e.isScheduled();
                        assertThat(wheel.remove(e)).isEqualTo(wasScheduled);
                        if (wasScheduled) {
                            e.removed = true;
                        }
                    }
                }
                default -> {
                    now += s.amount();
                    expiries.add(now);
                    // In batches, as the system clock's timer does, removing an entry between
                    // batches now and then (it may be in the middle of coming down a level).
                    int round = 0;
                    do {
                        for (TimerWheel.Node n = wheel.expire(origin + now, batch); n != null; n = n.nextExpired()) {
                            Entry e = (Entry) n;
                            assertThat(seen.merge(e, 1, Integer::sum)).as("fired once").isEqualTo(1);
                            e.firedAt = now;
                        }
                        Entry victim = added.isEmpty() ? null : added.get((int) ((s.amount() + 7L * round) % added.size()));
                        if (round++ % 3 == 1 && victim != null && victim.isScheduled()) {
                            assertThat(wheel.remove(victim)).isTrue();
                            victim.removed = true;
                        }
                    } while (wheel.isBehind());
                }
            }
        }
        for (Entry e : added) {
            long boundary = ((e.deadline + TICK - 1) / TICK) * TICK;
            Long oneTickLate = expiries.stream().filter(t -> t >= boundary + TICK).findFirst().orElse(null);
            if (e.removed) {
                assertThat(e.firedAt).as("removed before it came due").isEqualTo(-1);
            } else if (e.firedAt >= 0) {
                assertThat(e.firedAt).as("never before its tick boundary").isGreaterThanOrEqualTo(boundary);
                if (oneTickLate != null) {
                    assertThat(e.firedAt).as("at most one tick late").isLessThanOrEqualTo(oneTickLate);
                }
            } else {
                assertThat(oneTickLate).as("still waiting though more than a tick past due").isNull();
                assertThat(e.isScheduled()).isTrue();
            }
        }
        long waiting = added.stream().filter(TimerWheel.Node::isScheduled).count();
        assertThat(wheel.size()).isEqualTo((int) waiting);
    }
}
