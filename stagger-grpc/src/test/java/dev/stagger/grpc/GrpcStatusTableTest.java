package dev.stagger.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.http.StatusTable.Rule;
import io.grpc.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class GrpcStatusTableTest {
    private final GrpcStatusTable table = GrpcStatusTable.defaults();

    @Test
    void retriesUnavailableForEveryMethod() {
        assertThat(table.rule(Status.Code.UNAVAILABLE)).isEqualTo(Rule.RETRY);
        assertThat(table.retries(Status.Code.UNAVAILABLE, false)).isTrue();
    }

    @ParameterizedTest
    @EnumSource(value = Status.Code.class, names = {"DEADLINE_EXCEEDED", "ABORTED", "RESOURCE_EXHAUSTED"})
    void retriesCodesThatMayFollowProcessingOnlyForMethodsSafeToRepeat(Status.Code code) {
        assertThat(table.retries(code, true)).isTrue();
        assertThat(table.retries(code, false)).isFalse();
    }

    @ParameterizedTest
    @EnumSource(value = Status.Code.class, names = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "NOT_FOUND",
            "ALREADY_EXISTS", "PERMISSION_DENIED", "UNAUTHENTICATED", "FAILED_PRECONDITION", "OUT_OF_RANGE",
            "UNIMPLEMENTED", "INTERNAL", "DATA_LOSS"})
    void neverRetriesCodesThatDescribeTheCallOrAFaultARetryDoesNotFix(Status.Code code) {
        assertThat(table.rule(code)).isEqualTo(Rule.NEVER);
    }

    @Test
    void aChangedTableLeavesTheDefaultsAsTheyWere() {
        GrpcStatusTable changed = table.withRetryIfIdempotent(Status.Code.UNAVAILABLE).withRetry(Status.Code.INTERNAL);

        assertThat(changed.rule(Status.Code.UNAVAILABLE)).isEqualTo(Rule.RETRY_IF_IDEMPOTENT);
        assertThat(changed.rule(Status.Code.INTERNAL)).isEqualTo(Rule.RETRY);
        assertThat(table).isEqualTo(GrpcStatusTable.defaults());
        assertThat(table.rule(Status.Code.UNAVAILABLE)).isEqualTo(Rule.RETRY);
    }

    @Test
    void refusesToRetryOk() {
        assertThatThrownBy(() -> GrpcStatusTable.none().withRetry(Status.Code.OK))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("code must be an error to be retried, got OK");
    }

    @Test
    void aBreakerCountsRetriedCodesAndUnknownFailuresButNotAnswers() {
        var failures = table.failures();

        assertThat(failures.isFailure(null, Status.UNAVAILABLE.asRuntimeException())).isTrue();
        assertThat(failures.isFailure(null, new IllegalStateException("no status"))).isTrue();
        assertThat(failures.isFailure(null, Status.NOT_FOUND.asRuntimeException())).isFalse();
        assertThat(failures.isFailure("a response", null)).isFalse();
    }
}
