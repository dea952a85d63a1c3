package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.observability.internal.RetryMeters;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** The attempt tag keeps the number of timer series at five, whatever the policy allows. */
class AttemptTagPropertyTest {

    @Property
    void everyAttemptNumberMapsToOneOfFiveTagValues(@ForAll @IntRange(min = 1) int attempt) {
        assertThat(RetryMeters.attemptTag(attempt)).isIn("1", "2", "3", "4", "5+");
    }

    @Property
    void attemptsOneToFourKeepTheirNumber(@ForAll @IntRange(min = 1, max = 4) int attempt) {
        assertThat(RetryMeters.attemptTag(attempt)).isEqualTo(Integer.toString(attempt));
    }

    @Property
    void everyAttemptFromTheFifthSharesOneTag(@ForAll @IntRange(min = 5) int attempt) {
        assertThat(RetryMeters.attemptTag(attempt)).isEqualTo("5+");
    }
}
