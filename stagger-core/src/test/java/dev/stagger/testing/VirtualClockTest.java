package dev.stagger.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class VirtualClockTest {
    private final VirtualClock clock = new VirtualClock();
    private final List<String> ran = new ArrayList<>();

    @AfterEach
    void clearInterruptStatus() {
        Thread.interrupted();
    }

    @Test
    void sleepRecordsTheWaitAndAdvancesTimeAtOnce() throws InterruptedException {
        clock.sleep(Duration.ofSeconds(3).toNanos());
        clock.sleep(Duration.ofMillis(500).toNanos());

        assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(3), Duration.ofMillis(500));
        assertThat(clock.now()).isEqualTo(Duration.ofMillis(3500));
    }

    @Test
    void aZeroSleepIsNotRecorded() throws InterruptedException {
        clock.sleep(0);

        assertThat(clock.sleeps()).isEmpty();
    }

    @Test
    void anInterruptedThreadCannotSleepAndLosesItsInterruptStatus() {
        Thread.currentThread().interrupt();

        assertThatThrownBy(() -> clock.sleep(1)).isInstanceOf(InterruptedException.class);
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
        assertThat(clock.now()).isZero();
    }

    @Test
    void theWallClockStepsBackAndForthWithoutMovingMonotonicTimeOrRunningTasks() {
        clock.schedule(() -> ran.add("at 1 s"), Duration.ofSeconds(1).toNanos());
        clock.advance(Duration.ofMillis(500));
        long wall = clock.currentTimeMillis();

        clock.stepWallClock(Duration.ofHours(-1));
        assertThat(clock.currentTimeMillis()).isEqualTo(wall - Duration.ofHours(1).toMillis());
        clock.stepWallClock(Duration.ofMinutes(90));
        assertThat(clock.currentTimeMillis()).isEqualTo(wall + Duration.ofMinutes(30).toMillis());

        assertThat(clock.nanoTime()).isEqualTo(Duration.ofMillis(500).toNanos());
        assertThat(ran).isEmpty();
        clock.advance(Duration.ofMillis(500)); // both move on together
        assertThat(clock.currentTimeMillis()).isEqualTo(wall + Duration.ofMinutes(30).plusMillis(500).toMillis());
        assertThat(ran).containsExactly("at 1 s");
    }

    @Test
    void scheduledTasksRunWhenTimeReachesThemInTimeOrder() {
        clock.schedule(() -> ran.add("at 2 s"), Duration.ofSeconds(2).toNanos());
        clock.schedule(() -> ran.add("at 1 s"), Duration.ofSeconds(1).toNanos());
        clock.schedule(() -> ran.add("also at 1 s, scheduled later"), Duration.ofSeconds(1).toNanos());

        clock.advance(Duration.ofMillis(999));
        assertThat(ran).isEmpty();
        clock.advance(Duration.ofSeconds(1));

        assertThat(ran).containsExactly("at 1 s", "also at 1 s, scheduled later");
        assertThat(clock.pendingTasks()).isEqualTo(1);
    }

    @Test
    void aTaskSeesTheTimeItWasDueAt() {
        List<Long> times = new ArrayList<>();
        clock.schedule(() -> times.add(clock.nanoTime()), 700);

        clock.advance(Duration.ofSeconds(5));

        assertThat(times).containsExactly(700L);
        assertThat(clock.nanoTime()).isEqualTo(Duration.ofSeconds(5).toNanos());
    }

    @Test
    void aCancelledTaskNeverRuns() {
        Clock.Cancellable handle = clock.schedule(() -> ran.add("cancelled"), 10);

        assertThat(handle.cancel()).isTrue();
        clock.runUntilIdle();

        assertThat(ran).isEmpty();
        assertThat(handle.cancel()).as("nothing left to cancel").isFalse();
    }

    @Test
    void runUntilIdleAlsoRunsTasksScheduledByTasks() {
        clock.schedule(() -> {
            ran.add("first");
            clock.schedule(() -> ran.add("second"), Duration.ofMinutes(1).toNanos());
        }, 1);

        int count = clock.runUntilIdle();

        assertThat(count).isEqualTo(2);
        assertThat(ran).containsExactly("first", "second");
        assertThat(clock.now()).isEqualTo(Duration.ofMinutes(1).plusNanos(1));
    }

    @Test
    void runUntilIdleStopsARunawayLoop() {
        Runnable[] forever = new Runnable[1];
        forever[0] = () -> clock.schedule(forever[0], 1);
        clock.schedule(forever[0], 1);

        assertThatThrownBy(() -> clock.runUntilIdle(100)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("100");
    }

    @Test
    void aTaskDueBeyondTheEndOfTimeNeverFallsDue() {
        // An uncapped exponential backoff saturates at Long.MAX_VALUE nanoseconds.
        clock.advance(Duration.ofSeconds(1));
        clock.schedule(() -> ran.add("never"), Long.MAX_VALUE);

        clock.advance(Duration.ofDays(365));

        assertThat(ran).isEmpty();
        assertThat(clock.pendingTasks()).isEqualTo(1);
    }

    @Test
    void sleepingBeyondTheEndOfTimeStillMovesTimeForward() throws InterruptedException {
        clock.advance(Duration.ofSeconds(1));

        clock.sleep(Long.MAX_VALUE);

        assertThat(clock.nanoTime()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void wallClockTimeMovesWithVirtualTime() {
        long before = clock.currentTimeMillis();

        clock.advance(Duration.ofSeconds(2));

        assertThat(clock.currentTimeMillis() - before).isEqualTo(2000);
    }

    @Test
    void timeNeverMovesBackwards() {
        assertThatThrownBy(() -> clock.advance(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT-1S");
    }
}
