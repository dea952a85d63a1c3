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

    /** Tracing as Boot configures it: observations, the OpenTelemetry SDK and Micrometer Tracing's bridge to it. */
    public static final Class<?>[] TRACING = {
            org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration.class,
            org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration.class,
            org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration.class,
            org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration.class};

    private TestAutoConfigurations() {
    }
}
