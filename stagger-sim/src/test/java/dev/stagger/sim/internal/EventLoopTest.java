package dev.stagger.sim.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Clock;
import dev.stagger.testing.VirtualClock;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class EventLoopTest {

    /**
     * A random program of events that schedule more events (delays of zero, within one tick,
     * within the wheel, past its horizon and at the end of time) and cancel some of their waits,
     * run on the event loop and on {@link VirtualClock}: both must run the same events at the same
     * times in the same order.
     */
    @Property(tries = 200)
    void runsEventsInTheOrderAndAtTheTimesVirtualClockDoes(@ForAll long seed) {
        List<String> onLoop = new ArrayList<>();
        EventLoop loop = new EventLoop();
        int ranOnLoop = new Program(seed, loop, onLoop).start(loop::runUntilIdle);

        List<String> onVirtualClock = new ArrayList<>();
        VirtualClock clock = new VirtualClock();
        int ranOnClock = new Program(seed, clock, onVirtualClock).start(clock::runUntilIdle);

        assertThat(onLoop).isNotEmpty().containsExactlyElementsOf(onVirtualClock);
        assertThat(ranOnLoop).isEqualTo(ranOnClock);
    }

    @Test
    void aCancelledWaitNeitherRunsNorCountsNorMovesTime() {
        EventLoop loop = new EventLoop();
        List<String> ran = new ArrayList<>();
        Clock.Cancellable wait = loop.schedule(() -> ran.add("wait"), 5_000_000);
        loop.post(() -> ran.add("message at " + loop.nanoTime()), 1_000);

        assertThat(wait.cancel()).isTrue();
        assertThat(wait.cancel()).isFalse();
        assertThat(loop.runUntilIdle(100)).isEqualTo(1);
        assertThat(ran).containsExactly("message at 1000");
        assertThat(loop.nanoTime()).isEqualTo(1_000);
    }

    @Test
    void aWaitThatRanCannotBeCancelled() {
        EventLoop loop = new EventLoop();
        Clock.Cancellable wait = loop.schedule(() -> { }, 10);
        loop.runUntilIdle(10);
        assertThat(wait.cancel()).isFalse();
    }

    @Test
    void sleepRunsWhatFallsDueAndEndsAtItsTarget() {
        EventLoop loop = new EventLoop();
        List<Long> ran = new ArrayList<>();
        loop.post(() -> ran.add(loop.nanoTime()), 3_000);
        loop.post(() -> ran.add(loop.nanoTime()), 10_000_000_000L); // past the wheel's horizon
        loop.post(() -> ran.add(loop.nanoTime()), 20_000_000_000L);

        assertThat(catching(() -> loop.sleep(15_000_000_000L))).isNull();
        assertThat(ran).containsExactly(3_000L, 10_000_000_000L);
        assertThat(loop.nanoTime()).isEqualTo(15_000_000_000L);
    }

    @Test
    void stopsARunawayLoop() {
        EventLoop loop = new EventLoop();
        Runnable[] again = new Runnable[1];
        again[0] = () -> loop.post(again[0], 1);
        loop.post(again[0], 0);
        try {
            loop.runUntilIdle(1_000);
            throw new AssertionError("expected the loop to be stopped");
        } catch (IllegalStateException expected) {
            assertThat(expected).hasMessageContaining("still busy after 1000 events");
        }
    }

    private interface Sleep {
        void run() throws InterruptedException;
    }

    private static Throwable catching(Sleep sleep) {
        try {
            sleep.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    /** Events that log themselves and schedule children, decided by a random stream per event. */
    private static final class Program {
        private static final long[] DELAYS = {0, 1, 40_000, 65_536, 70_000, 1_000_000, 12_345_678, 2_000_000_000L,
                4_294_967_296L, 4_400_000_000L, 30_000_000_000L, Long.MAX_VALUE};
        private final long seed;
        private final Clock clock;
        private final List<String> log;
        private final List<Clock.Cancellable> waits = new ArrayList<>();
        private int nextId;

        Program(long seed, Clock clock, List<String> log) {
            this.seed = seed;
            this.clock = clock;
            this.log = log;
        }

        int start(IntFunction<Integer> runUntilIdle) {
            SplittableRandom random = new SplittableRandom(seed);
            for (int i = 0; i < 1 + random.nextInt(20); i++) {
                schedule(random);
            }
            return runUntilIdle.apply(100_000);
        }

        private void schedule(SplittableRandom random) {
            int id = nextId++;
            long delay = random.nextInt(3) == 0 ? random.nextLong(3_000_000_000L) : DELAYS[random.nextInt(DELAYS.length)];
            Runnable event = () -> run(id);
            if (random.nextBoolean()) {
                waits.add(clock.schedule(event, delay));
            } else if (clock instanceof EventLoop) {
                ((EventLoop) clock).post(event, delay);
            } else {
                clock.schedule(event, delay);
            }
        }

        private void run(int id) {
            log.add(id + "@" + clock.nanoTime());
            SplittableRandom random = new SplittableRandom(seed * 31 + id);
            if (nextId < 400) {
                for (int i = 0; i < random.nextInt(4); i++) {
                    schedule(random);
                }
            }
            if (!waits.isEmpty() && random.nextInt(4) == 0) {
                log.add("cancel " + waits.get(random.nextInt(waits.size())).cancel());
            }
        }
    }
}
