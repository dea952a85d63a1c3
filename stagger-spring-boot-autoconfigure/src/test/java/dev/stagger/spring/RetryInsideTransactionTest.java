package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testsupport.jdbc.TestDatabases;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * A {@code @StaggerRetry} method called from inside an outer {@code @Transactional} method, against
 * a real PostgreSQL: its first attempt dies in a deadlock, which aborts the outer transaction, so
 * a retry there could only fail with SQL state 25P02. The advice follows
 * {@code stagger.annotation.inside-transaction}, as {@code RetryingTransactionTemplate} does.
 */
@ExtendWith(OutputCaptureExtension.class)
class RetryInsideTransactionTest {
    private static final String ACCOUNTS = "stagger_spring_inside_" + UUID.randomUUID().toString().substring(0, 8);
    private static DataSource dataSource;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(JdbcTemplateAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
                    StaggerAutoConfiguration.class, StaggerTransactionAutoConfiguration.class))
            .withBean(DataSource.class, () -> dataSource)
            .withUserConfiguration(Beans.class)
            .withPropertyValues("stagger.retries.transfers.max-attempts=6",
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

    /** The retried method: debits, and its first attempt dies in a deadlock (40P01) before the credit. */
    static class Ledger {
        final AtomicInteger attempts = new AtomicInteger();
        final JdbcTemplate jdbc;

        Ledger(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        public int attempts() {
            return attempts.get();
        }

        @StaggerRetry("transfers")
        @Transactional
        public void transfer(int amount) {
            attempt(amount);
        }

        @StaggerRetry("transfers")
        @Transactional(propagation = Propagation.REQUIRES_NEW)
        public void transferInItsOwnTransaction(int amount) {
            attempt(amount);
        }

        private void attempt(int amount) {
            jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance - ? WHERE id = 'alice'", amount);
            if (attempts.incrementAndGet() == 1) {
                jdbc.execute("DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$");
            }
            jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance + ? WHERE id = 'bob'", amount);
        }
    }

    /** The outer transaction, as a service method calling the ledger. */
    static class Orders {
        final Ledger ledger;

        Orders(Ledger ledger) {
            this.ledger = ledger;
        }

        @Transactional
        public void place(int amount) {
            ledger.transfer(amount);
        }

        @Transactional
        public void placeWithTheTransferInItsOwnTransaction(int amount) {
            ledger.transferInItsOwnTransaction(amount);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        Ledger ledger(JdbcTemplate jdbc) {
            return new Ledger(jdbc);
        }

        @Bean
        Orders orders(Ledger ledger) {
            return new Orders(ledger);
        }
    }

    private static int balance(String id) {
        return new JdbcTemplate(dataSource).queryForObject("SELECT balance FROM " + ACCOUNTS + " WHERE id = ?",
                Integer.class, id);
    }

    @Test
    void byDefaultTheCallIsRefusedBeforeItRunsNamingTheProperty() {
        runner.run(context -> {
            Orders orders = context.getBean(Orders.class);
            assertThatThrownBy(() -> orders.place(250)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("@StaggerRetry(\"transfers\") on Ledger.transfer() was called inside a running transaction")
                    .hasMessageContaining("stagger.annotation.inside-transaction=once");
            assertThat(context.getBean(Ledger.class).attempts()).isZero();
            assertThat(balance("alice")).isEqualTo(1000);
            assertThat(balance("bob")).isEqualTo(0);
        });
    }

    @Test
    void withOnceTheMethodRunsOnceAndTheReasonIsLoggedOnce(CapturedOutput output) {
        runner.withPropertyValues("stagger.annotation.inside-transaction=once").run(context -> {
            Orders orders = context.getBean(Orders.class);
            Ledger ledger = context.getBean(Ledger.class);
            // the deadlock itself, not 25P02 from retries inside the aborted transaction
            assertThatThrownBy(() -> orders.place(250)).isInstanceOf(DataAccessException.class)
                    .hasMessageContaining("deadlock detected");
            assertThat(ledger.attempts()).isEqualTo(1);
            orders.place(100); // no deadlock this time: runs once, commits with the outer transaction
            assertThat(ledger.attempts()).isEqualTo(2);
            assertThat(balance("alice")).isEqualTo(900);
            assertThat(balance("bob")).isEqualTo(100);
        });
        assertThat(output.getOut().split("runs once, without retries, when called inside a running transaction", -1))
                .hasSize(2); // said once per method
    }

    @Test
    void aMethodStartingItsOwnTransactionIsStillRetried() {
        runner.run(context -> {
            context.getBean(Orders.class).placeWithTheTransferInItsOwnTransaction(250);
            assertThat(context.getBean(Ledger.class).attempts()).isEqualTo(2);
            assertThat(balance("alice")).isEqualTo(750);
            assertThat(balance("bob")).isEqualTo(250);
        });
    }

    @Test
    void outsideATransactionEachAttemptIsItsOwnTransaction() {
        runner.run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            ledger.transfer(250);
            assertThat(ledger.attempts()).isEqualTo(2);
            assertThat(balance("alice")).isEqualTo(750);
        });
    }

    @Test
    void aBadValueFailsStartupNamingTheProperty() {
        runner.withPropertyValues("stagger.annotation.inside-transaction=sometimes").run(context ->
                assertThat(EveryPropertyTest.messages(context.getStartupFailure()))
                        .contains("stagger.annotation.inside-transaction").contains("sometimes"));
    }
}
