package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How a run's goodput series turns into the time to recover. */
class MetastableResultTest {
    // capacity 1000/s, offered 900/s, trigger from 2 s to 4 s: recovered means >= 810 per second
    private static final MetastableConfig CONFIG = MetastableConfig.defaults()
            .withTrigger(Duration.ofSeconds(2), Duration.ofSeconds(2), 0.5).withDuration(Duration.ofSeconds(8));

    private static MetastableResult goodput(int... perSecond) {
        return new MetastableResult(MetastableScenario.NAIVE.setup(), CONFIG, perSecond, new int[perSecond.length], 0, 0, 0, 0,
                0, 0, Map.of());
    }

    @Test
    void goodputThatNeverDropsAfterTheTriggerHasRecoveredAtOnce() {
        assertThat(goodput(900, 900, 400, 400, 900, 900, 900, 900).timeToRecover()).contains(Duration.ZERO);
    }

    @Test
    void recoveryIsTheFirstSecondFromWhichGoodputStaysUp() {
        // up at 5 s, down again at 6 s, up for good from 7 s: three seconds after the trigger ended
        assertThat(goodput(900, 900, 400, 400, 0, 900, 100, 900).timeToRecover()).contains(Duration.ofSeconds(3));
    }

    @Test
    void goodputThatIsDownInTheLastSecondNeverRecovered() {
        assertThat(goodput(900, 900, 400, 400, 900, 900, 900, 809).timeToRecover()).isEmpty();
    }

    @Test
    void theTriggersSecondsGiveItsLowestAndMeanGoodput() {
        MetastableResult r = goodput(900, 900, 400, 500, 900, 900, 900, 900);

        assertThat(r.minGoodputDuringTrigger()).isEqualTo(400);
        assertThat(r.meanGoodputDuringTrigger()).isEqualTo(450.0);
        assertThat(r.reducedCapacity()).isEqualTo(500.0);
    }
}
