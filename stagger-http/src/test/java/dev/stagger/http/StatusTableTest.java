package dev.stagger.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StatusTableTest {

    @Test
    void defaultTableRetriesTheStatusesThatShowTheRequestWasNotProcessedForEveryRequest() {
        for (int s : new int[] {408, 429, 503}) {
            assertThat(StatusTable.defaults().rule(s)).as("status %d", s).isEqualTo(StatusTable.Rule.RETRY);
            assertThat(StatusTable.defaults().retries(s, false)).as("status %d", s).isTrue();
        }
    }

    @Test
    void defaultTableRetriesStatusesAfterWhichTheRequestMayHaveBeenProcessedOnlyForSafeRequests() {
        for (int s : new int[] {500, 502, 504}) {
            assertThat(StatusTable.defaults().retries(s, true)).as("status %d", s).isTrue();
            assertThat(StatusTable.defaults().retries(s, false)).as("status %d", s).isFalse();
        }
    }

    @Test
    void defaultTableRetriesConflictOnlyForIdempotentRequests() {
        assertThat(StatusTable.defaults().retries(409, true)).isTrue();
        assertThat(StatusTable.defaults().retries(409, false)).isFalse();
    }

    @Test
    void defaultTableNeverRetriesAnyOtherStatus() {
        for (int s = 100; s <= 599; s++) {
            if (s == 408 || s == 409 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504) {
                continue;
            }
            assertThat(StatusTable.defaults().retries(s, true)).as("status %d", s).isFalse();
        }
    }

    @Test
    void tablesAreImmutable() {
        StatusTable custom = StatusTable.defaults().withNever(503);
        assertThat(custom.retries(503, true)).isFalse();
        assertThat(StatusTable.defaults().retries(503, true)).isTrue();
    }

    @Test
    void rejectsStatusesOutsideTheHttpRange() {
        assertThatThrownBy(() -> StatusTable.defaults().withRetry(600))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("600");
    }

    @Test
    void refusesToRetrySuccessfulStatuses() {
        assertThatThrownBy(() -> StatusTable.none().withRetry(200))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("200");
    }

    @Test
    void breakerCountsEveryExceptionAsAFailure() {
        assertThat(StatusTable.defaults().failures().isFailure(null, new java.io.IOException("reset"))).isTrue();
    }
}
