package dev.stagger.spring;

/** Auto-configurations on this module's test class path that only some tests' contexts may run. */
public final class TestAutoConfigurations {
    /**
     * JPA, Spring Data and jOOQ (RetriedJpaTransactionsTest brings them): an application context with
     * a {@code DataSource} and full auto-configuration would otherwise start Hibernate and swap its
     * transaction manager for JPA's. For {@code spring.autoconfigure.exclude}.
     */
    public static final String JPA_AND_JOOQ = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
            + "org.springframework.boot.hibernate.autoconfigure.metrics.HibernateMetricsAutoConfiguration,"
            + "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration,"
            + "org.springframework.boot.data.autoconfigure.metrics.DataRepositoryMetricsAutoConfiguration,"
            + "org.springframework.boot.data.autoconfigure.web.DataWebAutoConfiguration,"
            + "org.springframework.boot.persistence.autoconfigure.PersistenceExceptionTranslationAutoConfiguration,"
            + "org.springframework.boot.jooq.autoconfigure.JooqAutoConfiguration";

    private TestAutoConfigurations() {
    }
}
