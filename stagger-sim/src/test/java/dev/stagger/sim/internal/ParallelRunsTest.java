package dev.stagger.sim.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ParallelRunsTest {

    @Test
    void combinesEveryResultInRunOrderOnTheCallingThread() {
        Thread caller = Thread.currentThread();
        List<Integer> combined = new ArrayList<>();
        List<Thread> combiningThreads = new ArrayList<>();
        ParallelRuns.inOrder(50, i -> {
            // later runs finish first, so results arrive out of order
            busyFor((50 - i) * 20_000L);
            return i * i;
        }, (square, i) -> {
            assertThat(square).isEqualTo(i * i);
            combined.add(i);
            combiningThreads.add(Thread.currentThread());
        });
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            expected.add(i);
        }
        assertThat(combined).containsExactlyElementsOf(expected);
        assertThat(combiningThreads).containsOnly(caller);
    }

    @Test
    void aFailingRunFailsTheWholeWithItsOwnException() {
        assertThatThrownBy(() -> ParallelRuns.inOrder(10, i -> {
            if (i == 7) {
                throw new IllegalArgumentException("run 7 failed");
            }
            return i;
        }, (r, i) -> { })).isInstanceOf(IllegalArgumentException.class).hasMessage("run 7 failed");
    }

    private static void busyFor(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }
}
