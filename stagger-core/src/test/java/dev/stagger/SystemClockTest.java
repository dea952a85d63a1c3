package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The real clock's edges that need no real waiting. */
class SystemClockTest {
    private final Clock clock = Clock.system();

    @AfterEach
    void clearInterruptStatus() {
        Thread.interrupted();
    }

    @Test
    void aZeroWaitReturnsAtOnce() throws InterruptedException {
        clock.sleep(0);
        clock.sleep(-5);
    }

    @Test
    void aZeroWaitStillObservesAnInterrupt() {
        Thread.currentThread().interrupt();

        assertThatThrownBy(() -> clock.sleep(0)).isInstanceOf(InterruptedException.class);
        assertThat(Thread.currentThread().isInterrupted()).as("cleared, as Thread.sleep does").isFalse();
    }

    @Test
    void scheduledTasksRunOffTheCallersThread() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Thread> runner = new AtomicReference<>();

        clock.schedule(() -> {
            runner.set(Thread.currentThread());
            done.countDown();
        }, 0);

        assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(runner.get()).isNotSameAs(Thread.currentThread());
        assertThat(runner.get().getName()).as("never the timer thread itself").isNotEqualTo("stagger-timer");
    }

    @Test
    void aWaitCancelledBeforeItIsDueReportsTrueOnce() {
        Clock.Cancellable wait = clock.schedule(() -> {
            throw new AssertionError("cancelled, so never run");
        }, TimeUnit.HOURS.toNanos(1));

        assertThat(wait.cancel()).isTrue();
        assertThat(wait.cancel()).as("already out of the wheel").isFalse();
    }

    @Test
    void cancellingATaskThatRanReportsFalse() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        Clock.Cancellable ran = clock.schedule(done::countDown, 0);

        assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(ran.cancel()).isFalse();
    }

    @Test
    void anEarlierTaskAddedWhileTheTimerWaitsForALaterOneIsNotHeldBack() throws InterruptedException {
        Clock.Cancellable later = clock.schedule(() -> { }, TimeUnit.HOURS.toNanos(1));
        CountDownLatch done = new CountDownLatch(1);
        try {
            clock.schedule(done::countDown, 0);

            assertThat(done.await(5, TimeUnit.SECONDS)).as("the timer was woken for it").isTrue();
        } finally {
            later.cancel();
        }
    }

    @Test
    void theCoarseClockIsAPastReadingOfTheMonotonicClock() {
        long coarse = clock.coarseNanoTime();
        long precise = clock.nanoTime();

        // Normally about a millisecond behind; the bound is loose because a busy machine can
        // deschedule the ticker thread for a while.
        assertThat(precise - coarse).isBetween(0L, TimeUnit.SECONDS.toNanos(1));
    }
}
