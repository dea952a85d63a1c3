package dev.stagger.shedding.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RepeatedKeysTest {

    @Test
    void aKeyIsNewTheFirstTimeAndSeenAfterwards() {
        RepeatedKeys keys = new RepeatedKeys(1024);
        assertThat(keys.seenBefore("8e03978e-40d5-43e8-bc93-6894a57f9324")).isFalse();
        assertThat(keys.seenBefore("8e03978e-40d5-43e8-bc93-6894a57f9324")).isTrue();
        assertThat(keys.seenBefore("another")).isFalse();
    }

    @Test
    void remembersRecentKeysUpToItsCapacityAndForgetsOlderOnes() {
        RepeatedKeys keys = new RepeatedKeys(1 << 16);
        for (int i = 0; i < 1_000; i++) {
            keys.seenBefore("key-" + i);
        }
        int remembered = 0;
        for (int i = 0; i < 1_000; i++) {
            remembered += keys.seenBefore("key-" + i) ? 1 : 0;
        }
        // 1,000 keys in 65,536 slots (random per-instance seed): about n^2/2m = 7.6 keys lost to collisions,
        // roughly doubled because this loop re-inserts each lost key over another one; 50 is over ten
        // standard deviations away, and still fails a table that collides much more than its size says
        assertThat(remembered).isGreaterThan(950);
        for (int i = 0; i < 1 << 20; i++) {
            keys.seenBefore("newer-" + i);
        }
        int left = 0;
        for (int i = 0; i < 1_000; i++) {
            left += keys.seenBefore("key-" + i) ? 1 : 0;
        }
        assertThat(left).isLessThan(10); // sixteen times its capacity later: practically all evicted
    }

    @Test
    void roundsTheCapacityUpToAPowerOfTwo() {
        assertThat(new RepeatedKeys(1000).capacity()).isEqualTo(1024);
        assertThat(new RepeatedKeys(1024).capacity()).isEqualTo(1024);
        assertThat(new RepeatedKeys(1).capacity()).isEqualTo(2);
    }
}
