package dev.stagger.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Optional;
import net.jqwik.api.Assume;
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

    @Property
    void anRfc850DateLandsInTheHundredYearsEndingFiftyYearsAfterItsReceipt(
            @ForAll @LongRange(min = -2_208_988_800L, max = 10_413_792_000L) long nowSeconds,
            @ForAll @LongRange(min = -11_676_096_000L, max = 13_569_465_600L) long dateSeconds) {
        LocalDateTime sent = LocalDateTime.ofEpochSecond(dateSeconds, 0, ZoneOffset.UTC);
        Assume.that(!(sent.getMonthValue() == 2 && sent.getDayOfMonth() == 29)); // not in every candidate year
        String header = DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US).format(sent);
        LocalDateTime limit = LocalDateTime.ofEpochSecond(nowSeconds, 0, ZoneOffset.UTC).plusYears(50);

        LocalDateTime read = LocalDateTime.ofInstant(RetryAfter.parseDate(header, nowSeconds * 1000).orElseThrow(),
                ZoneOffset.UTC);

        assertThat(read).isBeforeOrEqualTo(limit).isAfter(limit.minusYears(100));
        assertThat(Math.floorMod(read.getYear() - sent.getYear(), 100)).isZero();
        assertThat(read.withYear(sent.getYear())).isEqualTo(sent);
    }
}
