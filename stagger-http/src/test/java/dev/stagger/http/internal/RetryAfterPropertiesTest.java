package dev.stagger.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;

class RetryAfterPropertiesTest {
    private static final Duration MAX = Duration.ofMinutes(5);

    @Property
    void delaySecondsAreHonouredUpToTheMaximum(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seconds) {
        Duration expected = seconds > MAX.toSeconds() ? MAX : Duration.ofSeconds(seconds);
        assertThat(RetryAfter.parse(Long.toString(seconds), 0, MAX)).contains(expected);
    }

    @Property
    void anyHeaderValueGivesNothingOrAWaitBetweenZeroAndTheMaximum(@ForAll String value,
                                                                   @ForAll @LongRange(min = 0) long nowMillis) {
        Optional<Duration> wait = RetryAfter.parse(value, nowMillis, MAX);
        wait.ifPresent(d -> assertThat(d).isBetween(Duration.ZERO, MAX));
    }
}
