package dev.stagger.jobs.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RandomSource;
import dev.stagger.testing.VirtualClock;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a pool thread waits after database failures: one schedule per run of failures. */
class PoolSignalsTest {
    private final List<Duration> waits = new ArrayList<>();
    // full jitter at 0.5 waits half of each step; a stopped pool does not actually wait
    private final PoolSignals signals = new PoolSignals(RandomSource.sequence(0.5), (e, d) -> waits.add(d));
    private final Pacer pacer = signals.pacer(new VirtualClock());

    PoolSignalsTest() {
        signals.stopAll();
    }

    @Test
    void consecutiveFailuresContinueOneScheduleAndASuccessStartsItOver() throws Exception {
        PoolSignals.Reconnect reconnect = signals.reconnect(pacer);
        SQLException down = new SQLException("connection refused", "08001");

        for (int i = 0; i < 8; i++) {
            reconnect.pauseAfter(down);
        }
        reconnect.succeeded();
        reconnect.pauseAfter(down);

        assertThat(waits).containsExactly(ms(50), ms(100), ms(200), ms(400), ms(800), ms(1600), ms(2500), ms(2500),
                ms(50));
    }

    @Test
    void eachThreadHasItsOwnRunOfFailures() throws Exception {
        PoolSignals.Reconnect fetcher = signals.reconnect(pacer);
        PoolSignals.Reconnect completer = signals.reconnect(pacer);
        SQLException down = new SQLException("connection refused", "08001");

        fetcher.pauseAfter(down);
        fetcher.pauseAfter(down);
        completer.pauseAfter(down);

        assertThat(waits).containsExactly(ms(50), ms(100), ms(50));
    }

    private static Duration ms(long millis) {
        return Duration.ofMillis(millis);
    }
}
