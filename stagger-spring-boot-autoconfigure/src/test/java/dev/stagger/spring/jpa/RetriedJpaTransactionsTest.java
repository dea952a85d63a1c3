package dev.stagger.spring.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testsupport.jdbc.TestDatabases;
import dev.stagger.spring.RetryingTransactionTemplate;
import dev.stagger.spring.StaggerAutoConfiguration;
import dev.stagger.spring.StaggerTransactionAutoConfiguration;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration;
import org.springframework.boot.jooq.autoconfigure.JooqAutoConfiguration;
import org.springframework.boot.persistence.autoconfigure.EntityScan;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.SharedEntityManagerCreator;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * JPA (Hibernate, a Spring Data repository) and jOOQ code inside the starter's retrying
 * transactions, on a real PostgreSQL: the write of an attempt that dies in a deadlock is rolled
 * back with it, and the next attempt commits once. JPA's and jOOQ's auto-configuration run in this
 * test's own contexts only; the tables are in a schema unique to the run, dropped afterwards.
 */
class RetriedJpaTransactionsTest {
    private static final String SCHEMA = "stagger_jpa_" + UUID.randomUUID().toString().substring(0, 8);
    private static final String ACCOUNTS = SCHEMA + ".accounts";
    private static DataSource dataSource;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HibernateJpaAutoConfiguration.class, JooqAutoConfiguration.class,
                    TransactionAutoConfiguration.class, StaggerAutoConfiguration.class,
                    StaggerTransactionAutoConfiguration.class))
            .withBean(DataSource.class, () -> dataSource)
            .withUserConfiguration(Config.class)
            .withPropertyValues("spring.jpa.hibernate.ddl-auto=none",
                    "spring.jpa.properties.hibernate.default_schema=" + SCHEMA,
                    "stagger.retries.transfers.max-attempts=3",
                    "stagger.retries.transfers.backoff.type=none");

    @Configuration(proxyBeanMethods = false)
    @EntityScan(basePackageClasses = Account.class)
    @EnableJpaRepositories(basePackageClasses = AccountRepository.class)
    static class Config {
        @Bean
        Bank bank(AccountRepository accounts, EntityManagerFactory entityManagerFactory) {
            return new Bank(accounts, SharedEntityManagerCreator.createSharedEntityManager(entityManagerFactory));
        }
    }

    /** A negative control: the transaction advice ordered outside the retry. */
    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(order = 0)
    static class TransactionsOutermost {
    }

    @BeforeAll
    static void createSchema() {
        dataSource = TestDatabases.postgres();
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("CREATE SCHEMA " + SCHEMA);
        jdbc.execute("CREATE TABLE " + ACCOUNTS + " (id TEXT PRIMARY KEY, balance INT NOT NULL)");
    }

    @AfterAll
    static void dropSchema() {
        if (dataSource != null) {
            new JdbcTemplate(dataSource).execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
        }
    }

    @BeforeEach
    void openAccounts() {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.update("DELETE FROM " + ACCOUNTS);
        jdbc.update("INSERT INTO " + ACCOUNTS + " VALUES ('alice', 1000), ('bob', 0)");
    }

    private static int balance(String id) {
        return new JdbcTemplate(dataSource).queryForObject("SELECT balance FROM " + ACCOUNTS + " WHERE id = ?",
                Integer.class, id);
    }

    @Test
    void theStarterRetriesOnTheJpaTransactionManager() {
        runner.run(context -> {
            assertThat(context.getBean(PlatformTransactionManager.class)).isInstanceOf(JpaTransactionManager.class);
            assertThat(context).hasSingleBean(RetryingTransactionTemplate.class);
        });
    }

    @Test
    void anEntityWriteOfTheDeadlockedAttemptIsRolledBackAndTheTemplateCommitsOnce() {
        runner.run(context -> {
            RetryingTransactionTemplate transactions = context.getBean(RetryingTransactionTemplate.class);
            EntityManager entityManager = SharedEntityManagerCreator.createSharedEntityManager(
                    context.getBean(EntityManagerFactory.class));
            AtomicInteger attempts = new AtomicInteger();
            List<Integer> aliceSeen = new ArrayList<>();
            transactions.execute(status -> {
                Account alice = entityManager.find(Account.class, "alice");
                aliceSeen.add(alice.getBalance());
                alice.add(-100);
                entityManager.flush(); // the UPDATE reaches PostgreSQL inside this attempt's transaction
                if (attempts.incrementAndGet() == 1) {
                    entityManager.createNativeQuery(Bank.DEADLOCK).executeUpdate();
                }
                entityManager.find(Account.class, "bob").add(100);
                return null;
            });
            assertThat(attempts).hasValue(2);
            assertThat(aliceSeen).containsExactly(1000, 1000); // the retry starts from the rolled-back state
            assertThat(balance("alice")).isEqualTo(900);
            assertThat(balance("bob")).isEqualTo(100);
        });
    }

    @Test
    void aStaggerRetryAroundTransactionalRetriesTheRepositoryWriteAndCommitsOnce() {
        runner.run(context -> {
            Bank bank = context.getBean(Bank.class);
            bank.transferHittingOneDeadlock(250);
            assertThat(bank.attempts()).isEqualTo(2);
            assertThat(balance("alice")).isEqualTo(750); // debited once, not twice
            assertThat(balance("bob")).isEqualTo(250);
        });
    }

    @Test
    void orderedInsideTransactionalTheRetryRunsInTheAbortedTransactionAndFails() {
        // inside-transaction=retry: the advice retries inside the running transaction, as it did before
        // the default (fail) refused such calls
        runner.withUserConfiguration(TransactionsOutermost.class)
                .withPropertyValues("stagger.annotation.inside-transaction=retry").run(context -> {
            Bank bank = context.getBean(Bank.class);
            // retried inside the transaction PostgreSQL aborted: the second attempt's first statement fails
            assertThatThrownBy(() -> bank.transferHittingOneDeadlock(250))
                    .satisfies(failure -> assertThat(sqlStates(failure)).contains("25P02"));
            assertThat(bank.attempts()).isEqualTo(1); // the second attempt never got past its debit
            assertThat(balance("alice")).isEqualTo(1000);
            assertThat(balance("bob")).isEqualTo(0);
        });
    }

    private static List<String> sqlStates(Throwable failure) {
        List<String> states = new ArrayList<>();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                states.add(sql.getSQLState());
            }
        }
        return states;
    }

    @Test
    void jooqAndTheHandedOutConnectionJoinTheJpaTransactionAndAreRetriedWithIt() {
        runner.run(context -> {
            RetryingTransactionTemplate transactions = context.getBean(RetryingTransactionTemplate.class);
            EntityManager entityManager = SharedEntityManagerCreator.createSharedEntityManager(
                    context.getBean(EntityManagerFactory.class));
            DSLContext jooq = context.getBean(DSLContext.class);
            Table<?> accounts = DSL.table(DSL.name(SCHEMA, "accounts"));
            Field<Integer> balance = DSL.field(DSL.name("balance"), Integer.class);
            Field<String> id = DSL.field(DSL.name("id"), String.class);
            AtomicInteger attempts = new AtomicInteger();
            List<Integer> jooqSaw = new ArrayList<>();
            transactions.run(connection -> {
                entityManager.find(Account.class, "alice").add(-100);
                entityManager.flush();
                // jOOQ reads the entity's uncommitted write: the same transaction
                jooqSaw.add(jooq.select(balance).from(accounts).where(id.eq("alice")).fetchOne(balance));
                jooq.update(accounts).set(balance, balance.plus(100)).where(id.eq("bob")).execute();
                if (attempts.incrementAndGet() == 1) {
                    try (var statement = connection.createStatement()) {
                        statement.execute(Bank.DEADLOCK); // on the connection handed out
                    }
                }
            });
            assertThat(attempts).hasValue(2);
            assertThat(jooqSaw).containsExactly(900, 900);
            assertThat(balance("alice")).isEqualTo(900);
            assertThat(balance("bob")).isEqualTo(100); // jOOQ's credit of the failed attempt rolled back too
        });
    }
}
