package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Decision;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLSyntaxErrorException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.sql.SQLTransientException;
import org.junit.jupiter.api.Test;

class SqlClassifierTest {
    private final SqlClassifier classifier = SqlClassifier.defaults();

    private Decision.Kind classify(Throwable failure) {
        return classifier.classify(null, failure, null).kind();
    }

    @Test
    void aPlainErrorCodeFiveFromAnotherDriverIsNotMistakenForSqliteBusy() {
        assertThat(classify(new SQLException("vendor error five", "HY000", 5))).isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void retriesTheWholeTransientExceptionFamilyWithoutAState() {
        assertThat(classify(new SQLTransientException("transient"))).isEqualTo(Decision.Kind.RETRY);
        assertThat(classify(new SQLTimeoutException("timeout"))).isEqualTo(Decision.Kind.RETRY);
        assertThat(classify(new SQLTransactionRollbackException("rolled back"))).isEqualTo(Decision.Kind.RETRY);
        assertThat(classify(new SQLTransientConnectionException("connection"))).isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void retriesRecoverableExceptions() {
        assertThat(classify(new SQLRecoverableException("connection reset"))).isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void retriesANonTransientConnectionExceptionByItsConnectionState() {
        assertThat(classify(new SQLNonTransientConnectionException("gone", "08006"))).isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void stopsOnNonTransientTypesWithoutARetryableState() {
        assertThat(classify(new SQLIntegrityConstraintViolationException("dup", "23000", 1062)))
                .isEqualTo(Decision.Kind.STOP);
        assertThat(classify(new SQLSyntaxErrorException("bad", "42000", 1064))).isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void stopsOnASqlExceptionWithNoStateAndNoCode() {
        assertThat(classify(new SQLException("something"))).isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void findsARetryableSqlExceptionWrappedAsACause() {
        SQLException deadlock = new SQLException("deadlock detected", "40P01");
        Throwable wrapped = new IllegalStateException("dao failed", new RuntimeException("layer", deadlock));
        assertThat(classify(wrapped)).isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void findsARetryableSqlExceptionChainedAsNextException() {
        BatchUpdateException batch = new BatchUpdateException("Batch entry 0 was aborted", null, 0, new int[0]);
        batch.setNextException(new SQLException("could not serialize access", "40001"));
        assertThat(classify(batch)).isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void followsNextExceptionsOfACause() {
        SQLException outer = new SQLException("outer");
        outer.setNextException(new SQLException("first"));
        outer.setNextException(new SQLException("[SQLITE_BUSY] locked", null, 5));
        assertThat(classify(new RuntimeException(outer))).isEqualTo(Decision.Kind.RETRY);
    }

    @Test
    void aPermanentFailureAnywhereInTheChainWinsOverADefaultRetry() {
        SQLException unique = new SQLException("duplicate key", "23505");
        unique.setNextException(new SQLTransientException("also transient"));
        assertThat(classify(unique)).isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void survivesACyclicCauseChain() {
        SQLException a = new SQLException("a", "HY000");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b);
        assertThat(classify(b)).isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void stopsOnFailuresThatAreNotSqlExceptions() {
        assertThat(classify(new IllegalStateException("bug"))).isEqualTo(Decision.Kind.STOP);
        assertThat(classify(new UncheckedIOException(new IOException("disk")))).isEqualTo(Decision.Kind.STOP);
        assertThat(classify(new InterruptedException())).isEqualTo(Decision.Kind.STOP);
        assertThat(classify(new OutOfMemoryError())).isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void neverRetriesACommitWhoseOutcomeIsUnknown() {
        SQLException lost = new SQLException("connection lost", "08006");
        assertThat(classify(new TransactionOutcomeUnknownException(lost))).isEqualTo(Decision.Kind.STOP);
        SqlClassifier everything = SqlClassifier.builder().retryIf(e -> true).build();
        assertThat(everything.classify(null, new TransactionOutcomeUnknownException(lost), null).kind())
                .isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void stopsOnTransactionResolutionUnknownAnywhereInTheChain() {
        SQLException unknown = new SQLTransientConnectionException("transaction resolution unknown", "08007");
        unknown.setNextException(new SQLException("connection failure", "08006"));
        assertThat(classify(new RuntimeException(unknown))).isEqualTo(Decision.Kind.STOP);
    }

    @Test
    void aCallerWhoseUnitOfWorkIsIdempotentMayAddTransactionResolutionUnknown() {
        SqlClassifier idempotent = SqlClassifier.builder().retrySqlStates("08007").build();
        assertThat(idempotent.isRetryable(new SQLException("transaction resolution unknown", "08007"))).isTrue();
        SQLException lost = new SQLException("transaction resolution unknown", "08007");
        assertThat(idempotent.isRetryable(new TransactionOutcomeUnknownException(lost))).isFalse();
    }

    @Test
    void acceptsEveryResult() {
        assertThat(classifier.classify("anything", null, null).kind()).isEqualTo(Decision.Kind.ACCEPT);
        assertThat(classifier.classify(null, null, null).kind()).isEqualTo(Decision.Kind.ACCEPT);
    }

    @Test
    void addedSqlStatesAreRetried() {
        SqlClassifier extended = SqlClassifier.builder().retrySqlStates("57014").build();
        assertThat(extended.isRetryable(new SQLException("canceled", "57014"))).isTrue();
        assertThat(classifier.isRetryable(new SQLException("canceled", "57014"))).isFalse();
    }

    @Test
    void anAddedSqlStateClassCoversEveryStateInIt() {
        SqlClassifier extended = SqlClassifier.builder().retrySqlStates("hy").build();
        assertThat(extended.isRetryable(new SQLException("general", "HY000"))).isTrue();
        assertThat(extended.isRetryable(new SQLException("other", "HZ000"))).isFalse();
    }

    @Test
    void anAddedRuleBeatsTheDefaultStopClasses() {
        // e.g. a racing insert that the unit of work resolves by reading on its next attempt
        SqlClassifier extended = SqlClassifier.builder().retrySqlStates("23505").build();
        assertThat(extended.isRetryable(new SQLException("duplicate key", "23505"))).isTrue();
        assertThat(extended.isRetryable(new SQLException("foreign key", "23503"))).isFalse();
    }

    @Test
    void addedVendorErrorCodesAreRetried() {
        SqlClassifier oracle = SqlClassifier.builder().retryErrorCodes(60, 8177).build();
        assertThat(oracle.isRetryable(new SQLException("ORA-00060: deadlock detected", "61000", 60))).isTrue();
        assertThat(oracle.isRetryable(new SQLException("ORA-00001: unique constraint", "23000", 1))).isFalse();
    }

    @Test
    void anAddedRuleSeesEverySqlExceptionInTheChain() {
        SqlClassifier extended = SqlClassifier.builder()
                .retryIf(e -> e.getMessage() != null && e.getMessage().contains("try again"))
                .build();
        Throwable wrapped = new RuntimeException(new SQLException("please try again", "HY000"));
        assertThat(extended.classify(null, wrapped, null).kind()).isEqualTo(Decision.Kind.RETRY);
        assertThat(extended.isRetryable(new SQLException("no", "HY000"))).isFalse();
    }

    @Test
    void addingKeepsTheDefaultTable() {
        SqlClassifier extended = SqlClassifier.builder().retryErrorCodes(60).build();
        assertThat(extended.isRetryable(new SQLException("deadlock", "40P01"))).isTrue();
        assertThat(extended.isRetryable(new SQLException("dup", "23505"))).isFalse();
    }

    @Test
    void rejectsMalformedAdditionsNamingTheField() {
        assertThatThrownBy(() -> SqlClassifier.builder().retrySqlStates("4000"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sqlStates").hasMessageContaining("4000");
        assertThatThrownBy(() -> SqlClassifier.builder().retrySqlStates((String) null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sqlStates");
        assertThatThrownBy(() -> SqlClassifier.builder().retryErrorCodes(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("errorCodes");
        assertThatThrownBy(() -> SqlClassifier.builder().retryIf(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("rule");
    }
}
