package dev.stagger.spring;

import dev.stagger.Clock;
import dev.stagger.jobs.JobListener;
import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.WorkerPool;
import dev.stagger.spring.StaggerProperties.PoolProperties;
import dev.stagger.spring.internal.InstanceFactory;
import dev.stagger.spring.internal.JobHandlers;
import dev.stagger.spring.internal.PropertyCheck;
import dev.stagger.spring.internal.SchemaModes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Durable jobs, only when asked ({@code stagger.jobs.enabled=true}): a {@link JobQueue} on the
 * application's {@code DataSource} (SQLite or PostgreSQL; its tables created or upgraded at
 * startup unless {@code stagger.jobs.schema-mode=validate}) and {@link StaggerJobPools}, one
 * {@link WorkerPool} per queue that has {@link StaggerJobHandler}s, started and stopped with the
 * context. With Micrometer, each pool reports through {@code JobTelemetry} ({@code stagger_jobs_*}).
 */
@AutoConfiguration(afterName = {"dev.stagger.spring.StaggerAutoConfiguration",
        "dev.stagger.spring.StaggerObservabilityAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"})
@ConditionalOnClass({JobQueue.class, DataSource.class})
@ConditionalOnProperty(prefix = "stagger.jobs", name = "enabled", havingValue = "true")
public class StaggerJobsAutoConfiguration {
    private static final String AT = "stagger.jobs.";
    private static final String POOLS = "stagger.jobs.pools";
    private static final boolean TELEMETRY = org.springframework.util.ClassUtils.isPresent(
            "dev.stagger.observability.JobTelemetry", StaggerJobsAutoConfiguration.class.getClassLoader())
            && org.springframework.util.ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry",
            StaggerJobsAutoConfiguration.class.getClassLoader());
    private static final boolean OBSERVATION = org.springframework.util.ClassUtils.isPresent(
            "dev.stagger.observability.JobObservation", StaggerJobsAutoConfiguration.class.getClassLoader())
            && org.springframework.util.ClassUtils.isPresent("io.micrometer.observation.ObservationRegistry",
            StaggerJobsAutoConfiguration.class.getClassLoader());

    @Bean
    @ConditionalOnMissingBean
    public JobQueue staggerJobQueue(ObjectProvider<DataSource> dataSources, StaggerProperties properties,
                                    ObjectProvider<Clock> clock) {
        DataSource dataSource = dataSources.getIfUnique();
        if (dataSource == null) { // asked for jobs: say why there are none rather than start without them
            throw PropertyCheck.invalid(AT + "enabled", "true", "the job queue needs one DataSource bean "
                    + "(spring.datasource.url, or a DataSource of the application's own); found "
                    + dataSources.stream().count());
        }
        StaggerProperties.Jobs p = properties.getJobs();
        JobQueue.Builder b = JobQueue.builder(dataSource).clock(clock.getIfUnique(Clock::system));
        PropertyCheck.apply(AT + "table-prefix", p.getTablePrefix(), b::tablePrefix);
        if (p.getSchemaMode() != null) {
            b.schemaMode(SchemaModes.parse(AT + "schema-mode", p.getSchemaMode()));
        }
        return b.build();
    }

    @Bean
    @ConditionalOnMissingBean
    public StaggerJobPools staggerJobPools(JobQueue queue, StaggerRegistry registry, StaggerProperties properties,
                                           ConfigurableListableBeanFactory beans) {
        ObjectProvider<?> meters = TELEMETRY && properties.getMetrics().isEnabled()
                ? beans.getBeanProvider(io.micrometer.core.instrument.MeterRegistry.class) : null;
        ObjectProvider<?> observations = OBSERVATION && properties.getObservation().isEnabled()
                ? beans.getBeanProvider(io.micrometer.observation.ObservationRegistry.class) : null;
        return new StaggerJobPools(queue, () -> pools(queue, registry, properties, JobHandlers.find(beans), meters,
                observations), properties.getJobs().getPhase());
    }

    private static Map<String, WorkerPool> pools(JobQueue queue, StaggerRegistry registry, StaggerProperties properties,
                                                 List<JobHandlers.Found> handlers, @Nullable ObjectProvider<?> meters,
                                                 @Nullable ObjectProvider<?> observations) {
        Map<String, List<JobHandlers.Found>> byQueue = new LinkedHashMap<>();
        Map<String, String> seen = new LinkedHashMap<>();
        for (JobHandlers.Found h : handlers) {
            String previous = seen.putIfAbsent(h.queue() + "\u0000" + h.type(), h.source());
            if (previous != null) {
                throw new IllegalStateException("two @StaggerJobHandler for type '" + h.type() + "' of queue '"
                        + h.queue() + "': " + previous + " and " + h.source());
            }
            byQueue.computeIfAbsent(h.queue(), q -> new java.util.ArrayList<>()).add(h);
        }
        for (String configured : properties.getJobs().getPools().keySet()) {
            if (!StaggerProperties.DEFAULT.equals(configured) && !byQueue.containsKey(configured)) {
                throw PropertyCheck.invalid(InstanceFactory.key(POOLS, configured), configured,
                        "no @StaggerJobHandler for queue '" + configured + "'; handlers were found for " + byQueue.keySet());
            }
        }
        Object meterRegistry = meters == null ? null : meters.getIfUnique();
        JobListener meterListener = meterRegistry == null ? null : Telemetry.of(meterRegistry);
        Object observationRegistry = observations == null ? null : observations.getIfUnique();
        JobListener telemetry = observationRegistry == null ? meterListener : Telemetry.observed(observationRegistry, meterListener);
        Map<String, WorkerPool> pools = new LinkedHashMap<>();
        byQueue.forEach((name, list) -> {
            PoolProperties p = registry.factory().merged(POOLS, name, PoolProperties::new);
            String at = InstanceFactory.key(POOLS, name) + ".";
            WorkerPool.Builder b;
            try {
                b = WorkerPool.builder(queue, name);
            } catch (IllegalArgumentException e) {
                throw PropertyCheck.invalid(at + "queue", name, e.getMessage());
            }
            PropertyCheck.apply(at + "concurrency", p.getConcurrency(), b::concurrency);
            PropertyCheck.apply(at + "poll-interval", p.getPollInterval(), b::pollInterval);
            PropertyCheck.apply(at + "lease", p.getLease(), b::lease);
            PropertyCheck.apply(at + "shutdown-timeout", p.getShutdownTimeout(), b::shutdownTimeout);
            PropertyCheck.apply(at + "nesting", p.getNesting(), b::nesting);
            if (p.getRetry() != null) {
                b.policy(registry.bareRetry(p.getRetry()).policy());
            }
            for (JobHandlers.Found h : list) {
                try {
                    if (h.retry().isEmpty()) {
                        b.handler(h.type(), h.handler());
                    } else {
                        b.handler(h.type(), h.handler(), registry.bareRetry(h.retry()).policy());
                    }
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException("@StaggerJobHandler " + h.source() + ": " + e.getMessage(), e);
                }
            }
            if (telemetry != null) {
                b.jobListener(telemetry);
            }
            pools.put(name, b.build());
        });
        return pools;
    }

    /** Loaded only with stagger-observability and Micrometer present (its {@code observed}: with Micrometer's observation API). */
    private static final class Telemetry {
        static JobListener of(Object registry) {
            return dev.stagger.observability.JobTelemetry.of((io.micrometer.core.instrument.MeterRegistry) registry);
        }

        /** Each handler run observed ({@code JobObservation}), then {@code meters} when there are any. */
        static JobListener observed(Object registry, @Nullable JobListener meters) {
            dev.stagger.observability.JobObservation o = dev.stagger.observability.JobObservation.of(
                    (io.micrometer.observation.ObservationRegistry) registry);
            return meters == null ? o : o.andThen(meters);
        }
    }
}
