package dev.stagger.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.jobs.JobState;
import java.util.List;
import org.junit.jupiter.api.Test;

class JobHistoryTest {

    @Test
    void aNewJobIsWaitingForItsFirstAttempt() {
        assertThat(JobHistory.describe(List.of(), JobState.AVAILABLE, 0)).isEqualTo("waiting for its first attempt");
    }

    @Test
    void aJobBackingOffAfterAFailureWaitsForTheNextAttempt() {
        assertThat(JobHistory.describe(List.of(1), JobState.AVAILABLE, 1)).isEqualTo("1 failed · waiting for attempt 2");
        assertThat(JobHistory.describe(List.of(1), JobState.RUNNING, 2)).isEqualTo("1 failed · running attempt 2");
    }

    @Test
    void aDeadJobReDrivenAndSucceededKeepsItsFailures() {
        assertThat(JobHistory.describe(List.of(1, 2, 3, 4), JobState.DEAD, 4)).isEqualTo("4 failed · dead");
        assertThat(JobHistory.describe(List.of(1, 2, 3, 4), JobState.AVAILABLE, 0)).isEqualTo("4 failed · re-driven · waiting for attempt 1");
        assertThat(JobHistory.describe(List.of(1, 2, 3, 4), JobState.SUCCEEDED, 1)).isEqualTo("4 failed · re-driven · succeeded on attempt 1");
    }

    @Test
    void aJobThatDiedOnItsFirstAttemptAndWasReDrivenIsToldApartFromARetry() {
        assertThat(JobHistory.describe(List.of(1), JobState.RUNNING, 1)).isEqualTo("1 failed · re-driven · running attempt 1");
        assertThat(JobHistory.describe(List.of(1), JobState.SUCCEEDED, 1)).isEqualTo("1 failed · re-driven · succeeded on attempt 1");
    }

    @Test
    void everyReDriveIsCounted() {
        assertThat(JobHistory.describe(List.of(1, 2, 1, 2), JobState.DEAD, 2)).isEqualTo("2 failed · re-driven · 2 failed · dead");
    }
}
