package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.Transactions;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * The money-losing trap of plain {@code Transactions} in a Spring application, and the starter's
 * retrying transactions that close it, against a real PostgreSQL (table names unique to the run).
 */
class TransactionsTrapTest {
    private static final String ACCOUNTS = "stagger_spring_accounts_" + UUID.randomUUID().toString().substring(0, 8);
    private static DataSource dataSource;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(JdbcTemplateAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
                    StaggerAutoConfiguration.class, StaggerTransactionAutoConfiguration.class))
            .withBean(DataSource.class, () -> dataSource)
            .withUserConfiguration(Bank.Config.class)
            .withPropertyValues("stagger.retries.transfers.max-attempts=3",
                    "stagger.retries.transfers.backoff.type=none");

    @BeforeAll
    static void createTable() {
        dataSource = TestDatabases.postgres();
        AccountsTable.create(dataSource, ACCOUNTS);
    }

    @AfterAll
    static void dropTable() {
        if (dataSource != null) {
            AccountsTable.drop(dataSource, ACCOUNTS);
        }
    }

    @BeforeEach
    void openAccounts() {
        AccountsTable.open(dataSource, ACCOUNTS);
    }

    static class Bank {
        final AtomicInteger attempts = new AtomicInteger();
        final JdbcTemplate jdbc;

        Bank(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        public int attempts() {
            return attempts.get();
        }

        /** Debits, then the first attempt dies in a deadlock (SQLSTATE 40P01) before the credit. */
        @StaggerRetry("transfers")
        @Transactional
        public void transferHittingOneDeadlock(int amount) {
            jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance - ? WHERE id = 'alice'", amount);
            if (attempts.incrementAndGet() == 1) {
                jdbc.execute("DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$");
            }
            jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance + ? WHERE id = 'bob'", amount);
        }

        @Configuration(proxyBeanMethods = false)
        static class Config {
            @Bean
            Bank bank(JdbcTemplate jdbc) {
                return new Bank(jdbc);
            }
        }
    }

    private static int balance(String id) {
        return new JdbcTemplate(dataSource).queryForObject("SELECT balance FROM " + ACCOUNTS + " WHERE id = ?",
                Integer.class, id);
    }

    /** The trap, as a user meets it: plain Transactions does not see JdbcTemplate's writes. */
    @Test
    void jdbcTemplateInsidePlainTransactionsCommitsOnItsOwnAndTheDebitSurvivesTheFailure() {
        runner.run(context -> {
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            assertThatThrownBy(() -> Transactions.of(dataSource).run(connection -> {
                jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance - 600 WHERE id = 'alice'");
                throw new IllegalStateException("credit failed");
            })).hasMessage("credit failed");
            assertThat(balance("alice")).isEqualTo(400); // 600 gone: the debit committed on JdbcTemplate's own connection
        });
    }

    @Test
    void jdbcTemplateInsideTheRetryingTransactionTemplateIsRolledBackWithTheUnitOfWork() {
        runner.run(context -> {
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            RetryingTransactionTemplate transactions = context.getBean(RetryingTransactionTemplate.class);
            assertThatThrownBy(() -> transactions.run(connection -> {
                jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance - 600 WHERE id = 'alice'");
                try (var statement = connection.prepareStatement(
                        "UPDATE " + ACCOUNTS + " SET balance = balance + 600 WHERE id = 'nobody'")) {
                    statement.executeUpdate();
                }
                throw new IllegalStateException("credit failed");
            })).hasMessage("credit failed");
            assertThat(balance("alice")).isEqualTo(1000);
        });
    }

    @Test
    void theConnectionHandedOutIsTheOneJdbcTemplateUses() {
        runner.run(context -> {
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            RetryingTransactionTemplate transactions = context.getBean(RetryingTransactionTemplate.class);
            Integer seen = transactions.call(connection -> {
                try (var statement = connection.prepareStatement(
                        "UPDATE " + ACCOUNTS + " SET balance = 1 WHERE id = 'bob'")) {
                    statement.executeUpdate();
                }
                return jdbc.queryForObject("SELECT balance FROM " + ACCOUNTS + " WHERE id = 'bob'", Integer.class);
            });
            assertThat(seen).isEqualTo(1); // JdbcTemplate read the uncommitted write: same transaction
        });
    }

    @Test
    void aDeadlockInTheTemplateRetriesTheWholeTransactionAndCommitsOnce() {
        runner.run(context -> {
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            RetryingTransactionTemplate transactions = context.getBean(RetryingTransactionTemplate.class);
            AtomicInteger attempts = new AtomicInteger();
            transactions.execute(status -> {
                jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance - 100 WHERE id = 'alice'");
                if (attempts.incrementAndGet() == 1) {
                    jdbc.execute("DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$");
                }
                return jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance + 100 WHERE id = 'bob'");
            });
            assertThat(attempts).hasValue(2);
            assertThat(balance("alice")).isEqualTo(900);
            assertThat(balance("bob")).isEqualTo(100);
        });
    }

    @Test
    void theAnnotationRunsOutsideTransactionalSoEachAttemptIsItsOwnTransaction() {
        runner.run(context -> assertOneCommittedTransfer(context));
    }

    @Test
    void orderedInsideTransactionalTheRetryRunsInTheAbortedTransactionAndFails() {
        runner.withUserConfiguration(TransactionsOutermost.class)
                .withPropertyValues("stagger.annotation.inside-transaction=retry").run(context -> {
                    Bank bank = context.getBean(Bank.class);
                    // retried inside the transaction PostgreSQL already aborted: every later statement fails
                    assertThatThrownBy(() -> bank.transferHittingOneDeadlock(250)).isNotNull();
                    assertThat(balance("alice")).isEqualTo(1000);
                    assertThat(balance("bob")).isEqualTo(0);
                });
    }

    @Test
    void orderedInsideTransactionalTheDefaultRefusesTheCallBeforeItRuns() {
        runner.withUserConfiguration(TransactionsOutermost.class).run(context -> {
            Bank bank = context.getBean(Bank.class);
            assertThatThrownBy(() -> bank.transferHittingOneDeadlock(250)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("inside a running transaction");
            assertThat(bank.attempts()).isZero();
            assertThat(balance("alice")).isEqualTo(1000);
        });
    }

    /** A negative control: transaction advice ordered outside the retry. */
    @Configuration(proxyBeanMethods = false)
    @org.springframework.transaction.annotation.EnableTransactionManagement(order = 0)
    static class TransactionsOutermost {
    }

    private static void assertOneCommittedTransfer(AssertableApplicationContext context) {
        Bank bank = context.getBean(Bank.class);
        bank.transferHittingOneDeadlock(250);
        assertThat(bank.attempts()).isEqualTo(2);
        assertThat(balance("alice")).isEqualTo(750); // debited once, not twice
        assertThat(balance("bob")).isEqualTo(250);
    }
}
