package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Decision;
import dev.stagger.EndReason;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The metrics listener adds no allocation of its own to a call: the events are built by the
 * retry, the meters are built at bind time, and recording is an array index and a meter update.
 */
class ListenerAllocationTest {
    private static final int ROUNDS = 200_000;

    @Test
    void recordingAFailedThenRecoveredCallAllocatesNothingPerCall() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        RetryListener listener = RetryMetrics.of(new SimpleMeterRegistry()).listener("payments");
        RetryEvent.AttemptFinished failed = new RetryEvent.AttemptFinished("payments", 1, 3, Duration.ofMillis(12),
                null, new java.io.IOException("reset"), Decision.retry());
        RetryEvent.RetryScheduled scheduled = new RetryEvent.RetryScheduled("payments", 2, 3, Duration.ofMillis(200),
                Decision.retry(), null, null);
        RetryEvent.AttemptFinished succeeded = new RetryEvent.AttemptFinished("payments", 2, 3, Duration.ofMillis(9),
                "ok", null, Decision.accept());
        RetryEvent.CallFinished finished = new RetryEvent.CallFinished("payments", EndReason.RECOVERED, 2, 3,
                Duration.ofMillis(221), "ok", null);

        Runnable oneCall = () -> {
            listener.onAttemptFinished(failed);
            listener.onRetryScheduled(scheduled);
            listener.onAttemptFinished(succeeded);
            listener.onCallFinished(finished);
        };
        for (int i = 0; i < ROUNDS; i++) {
            oneCall.run(); // warm up, so the measurement sees compiled code
        }
        long tid = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(tid);
        for (int i = 0; i < ROUNDS; i++) {
            oneCall.run();
        }
        long bytesPerCall = (threads.getThreadAllocatedBytes(tid) - before) / ROUNDS;

        assertThat(bytesPerCall).as("bytes allocated per recorded call").isLessThan(8);
    }
}
