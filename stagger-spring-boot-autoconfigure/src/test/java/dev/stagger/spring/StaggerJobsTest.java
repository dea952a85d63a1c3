package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jobs.JobContext;
import dev.stagger.jobs.JobHandler;
import dev.stagger.jobs.JobQueue;
import dev.stagger.testsupport.Await;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Job pools from {@code stagger.jobs.*}, handlers found among the beans, started and stopped with the context (SQLite). */
class StaggerJobsTest {
    private static final AutoConfigurations JOBS = AutoConfigurations.of(StaggerAutoConfiguration.class,
            StaggerObservabilityAutoConfiguration.class, StaggerJobsAutoConfiguration.class);

    @TempDir
    Path dir;

    /** A bean whose method handles one job type. */
    static class Mailer {
        final BlockingQueue<String> sent = new LinkedBlockingQueue<>();

        @StaggerJobHandler(queue = "mail", type = "receipt")
        public void send(JobContext context) {
            sent.add(context.payloadText());
        }
    }

    /** A bean that is a handler itself. */
    @StaggerJobHandler(queue = "audit", type = "entry")
    static class Auditor implements JobHandler {
        final BlockingQueue<String> entries = new LinkedBlockingQueue<>();

        @Override
        public void handle(JobContext context) {
            entries.add(context.payloadText());
        }
    }

    static class TwoArguments {
        @StaggerJobHandler(queue = "mail", type = "receipt")
        public void send(JobContext context, String extra) {
        }
    }

    /** The innermost cause: a startup failure is wrapped by the context, or not, depending on where it was thrown. */
    private static Throwable root(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private ApplicationContextRunner runner(String... properties) {
        DataSource ds = SqliteDataSource.file(dir.resolve("jobs.db"));
        return new ApplicationContextRunner().withConfiguration(JOBS)
                .withBean(DataSource.class, () -> ds)
                .withPropertyValues(properties);
    }

    private static Set<String> jobThreads() {
        Set<String> names = new TreeSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith("stagger-jobs-")) {
                names.add(t.getName());
            }
        }
        return names;
    }

    /**
     * The pool threads alive now that were not in {@code before}, once the ones a closed context
     * stopped have ended: the thread that tells Spring the pools stopped ends just after telling
     * it, so it may still be alive for a moment when the context's close returns. A leaked thread
     * stays past the 5 s allowed.
     */
    private static Set<String> newJobThreadsAfterClose(Set<String> before) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        Set<String> after = jobThreads();
        after.removeAll(before);
        while (!after.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
            after = jobThreads();
            after.removeAll(before);
        }
        return after;
    }

    @Test
    void aMethodHandlerFoundAmongTheBeansRunsJobsOnceTheContextHasStarted() {
        runner("stagger.jobs.enabled=true", "stagger.jobs.pools.mail.concurrency=2")
                .withBean(Mailer.class, Mailer::new)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(JobQueue.class).enqueue("mail", "receipt", "order-1");
                    assertThat(context.getBean(Mailer.class).sent.poll(20, TimeUnit.SECONDS)).isEqualTo("order-1");
                    assertThat(context.getBean(StaggerJobPools.class).pools()).containsOnlyKeys("mail");
                });
    }

    @Test
    void withAnObservationRegistryEachHandlerRunIsObservedUnlessSwitchedOff() {
        java.util.List<String> started = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.micrometer.observation.ObservationRegistry observations = io.micrometer.observation.ObservationRegistry.create();
        observations.observationConfig().observationHandler(new io.micrometer.observation.ObservationHandler<>() {
            @Override
            public boolean supportsContext(io.micrometer.observation.Observation.Context context) {
                return true;
            }

            @Override
            public void onStart(io.micrometer.observation.Observation.Context context) {
                started.add(context.getName() + " " + context.getContextualName());
            }
        });
        runner("stagger.jobs.enabled=true")
                .withBean(io.micrometer.observation.ObservationRegistry.class, () -> observations)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(Mailer.class, Mailer::new)
                .run(context -> {
                    context.getBean(JobQueue.class).enqueue("mail", "receipt", "order-1");
                    assertThat(context.getBean(Mailer.class).sent.poll(20, TimeUnit.SECONDS)).isEqualTo("order-1");
                    assertThat(started).contains("stagger.retry.call job mail/receipt", "stagger.retry.attempt mail/receipt attempt 1");
                });
        started.clear();
        runner("stagger.jobs.enabled=true", "stagger.observation.enabled=false")
                .withBean(io.micrometer.observation.ObservationRegistry.class, () -> observations)
                .withBean(Mailer.class, Mailer::new)
                .run(context -> {
                    context.getBean(JobQueue.class).enqueue("mail", "receipt", "order-2");
                    assertThat(context.getBean(Mailer.class).sent.poll(20, TimeUnit.SECONDS)).isEqualTo("order-2");
                    assertThat(started).noneMatch(name -> name.contains("mail/receipt"));
                });
    }

    @Test
    void onPostgresqlTheQueueIsCreatedAndAJobRunsAndTheContextStopsItsPools() throws Exception {
        DataSource postgres = dev.stagger.testsupport.jdbc.TestDatabases.postgres();
        String prefix = "spring_jobs_" + Long.toHexString(System.nanoTime()) + "_";
        Set<String> before = jobThreads();
        try {
            new ApplicationContextRunner().withConfiguration(JOBS).withBean(DataSource.class, () -> postgres)
                    .withPropertyValues("stagger.jobs.enabled=true", "stagger.jobs.table-prefix=" + prefix)
                    .withBean(Mailer.class, Mailer::new)
                    .run(context -> {
                        context.getBean(JobQueue.class).enqueue("mail", "receipt", "pg-1");
                        assertThat(context.getBean(Mailer.class).sent.poll(20, TimeUnit.SECONDS)).isEqualTo("pg-1");
                    });
            assertThat(newJobThreadsAfterClose(before)).isEmpty();
        } finally {
            try (Connection c = postgres.getConnection(); java.sql.Statement st = c.createStatement()) {
                for (String table : DatabaseTables.named(postgres, "%")) {
                    if (table.startsWith(prefix)) {
                        st.execute("DROP TABLE IF EXISTS " + table + " CASCADE");
                    }
                }
            }
        }
    }

    @Test
    void aBeanImplementingJobHandlerAnnotatedOnItsTypeRunsJobs() {
        runner("stagger.jobs.enabled=true")
                .withBean(Auditor.class, Auditor::new)
                .run(context -> {
                    context.getBean(JobQueue.class).enqueue("audit", "entry", "e-1");
                    assertThat(context.getBean(Auditor.class).entries.poll(20, TimeUnit.SECONDS)).isEqualTo("e-1");
                });
    }

    @Test
    void closingTheContextStopsEveryPoolThread() throws InterruptedException {
        Set<String> before = jobThreads();
        runner("stagger.jobs.enabled=true")
                .withBean(Mailer.class, Mailer::new)
                .run(context -> assertThat(context.getBean(StaggerJobPools.class).isRunning()).isTrue());
        assertThat(newJobThreadsAfterClose(before)).isEmpty();
    }

    @Test
    void withoutEnabledThereIsNoQueueNoPoolAndNoTable() throws Exception {
        DataSource ds = SqliteDataSource.file(dir.resolve("jobs.db"));
        new ApplicationContextRunner().withConfiguration(JOBS).withBean(DataSource.class, () -> ds)
                .withBean(Mailer.class, Mailer::new)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(JobQueue.class)
                        .doesNotHaveBean(StaggerJobPools.class));
        assertThat(DatabaseTables.named(ds, "%")).noneMatch(t -> t.startsWith("stagger"));
    }

    @Test
    void theQueueTablesAreCreatedAtStartupWithTheConfiguredPrefix() throws Exception {
        DataSource ds = SqliteDataSource.file(dir.resolve("jobs.db"));
        new ApplicationContextRunner().withConfiguration(JOBS).withBean(DataSource.class, () -> ds)
                .withPropertyValues("stagger.jobs.enabled=true", "stagger.jobs.table-prefix=shop_")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(DatabaseTables.named(ds, "%")).contains("shop_jobs");
    }

    @Test
    void jobsAskedForWithoutADataSourceFailStartupSayingWhy() {
        new ApplicationContextRunner().withConfiguration(JOBS).withPropertyValues("stagger.jobs.enabled=true")
                .run(context -> assertThat(root(context.getStartupFailure()))
                        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                        .hasMessageContaining("stagger.jobs.enabled")
                        .hasMessageContaining("needs one DataSource bean"));
    }

    @Test
    void aConfiguredPoolWithoutAnyHandlerFailsStartupNamingTheProperty() {
        runner("stagger.jobs.enabled=true", "stagger.jobs.pools.billing.concurrency=2")
                .withBean(Mailer.class, Mailer::new)
                .run(context -> assertThat(root(context.getStartupFailure()))
                        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                        .hasMessageContaining("stagger.jobs.pools.billing")
                        .hasMessageContaining("no @StaggerJobHandler for queue 'billing'"));
    }

    @Test
    void aBadPoolValueFailsStartupNamingThePropertyAndTheValue() {
        runner("stagger.jobs.enabled=true", "stagger.jobs.pools.default.concurrency=0")
                .withBean(Mailer.class, Mailer::new)
                .run(context -> assertThat(root(context.getStartupFailure()))
                        .hasMessageContaining("stagger.jobs.pools.mail.concurrency")
                        .hasMessageContaining("'0'")
                        .hasMessageContaining("concurrency must be in [1, 1000], got 0"));
    }

    @Test
    void aHandlerMethodWithAnotherSignatureFailsStartup() {
        runner("stagger.jobs.enabled=true")
                .withBean(TwoArguments.class, TwoArguments::new)
                .run(context -> assertThat(root(context.getStartupFailure()))
                        .hasMessageContaining("take one dev.stagger.jobs.JobContext"));
    }

    @Test
    void twoHandlersForOneTypeOfOneQueueFailStartupNamingBoth() {
        runner("stagger.jobs.enabled=true")
                .withBean("first", Mailer.class, Mailer::new)
                .withBean("second", Mailer.class, Mailer::new)
                .run(context -> assertThat(root(context.getStartupFailure()))
                        .hasMessageContaining("two @StaggerJobHandler for type 'receipt' of queue 'mail'"));
    }

    @Test
    void aPoolReportsToTheMeterRegistry() {
        runner("stagger.jobs.enabled=true")
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(Mailer.class, Mailer::new)
                .run(context -> {
                    context.getBean(JobQueue.class).enqueue("mail", "receipt", "order-2");
                    assertThat(context.getBean(Mailer.class).sent.poll(20, TimeUnit.SECONDS)).isEqualTo("order-2");
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    // the outcome is stored, then reported, after the handler returns
                    Await.within(Duration.ofSeconds(20), () -> !registry.find("stagger.jobs").counters().isEmpty());
                    assertThat(registry.find("stagger.jobs").tag("queue", "mail").counters()).isNotEmpty();
                });
    }
}
