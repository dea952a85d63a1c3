package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testsupport.Await;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A busy pool of short jobs claims whole batches. Each claim costs a round trip and a commit, so
 * how many jobs a claim carries bounds a pool's throughput; a pool that claimed the moment one
 * handler was free settled into claims of part batches (the handlers of the last batch finish
 * while the next claim is on its way). Claims are counted at the JDBC level, as the database sees
 * them.
 */
class ClaimBatchingTest {
    private static final int JOBS = 4000;
    private static final int CONCURRENCY = 8;

    @TempDir
    Path dir;
    DataSource plain;
    String prefix;
    WorkerPool pool;
    final AtomicInteger claims = new AtomicInteger();

    @AfterEach
    void tearDown() throws Exception {
        if (pool != null) {
            pool.shutdown(Duration.ofSeconds(5));
        }
        if (prefix != null) {
            Stores.dropPostgres(plain, prefix);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void aBusyPoolOfShortJobsClaimsWholeBatches(String database) throws Exception {
        if (database.equals("postgresql")) {
            plain = Stores.postgres();
            prefix = Stores.uniquePrefix();
        } else {
            plain = SqliteDataSource.file(dir.resolve("jobs.db"));
        }
        JobQueue jobs = JobQueue.builder(countingClaims(plain)).tablePrefix(prefix == null ? "stagger_" : prefix).build();
        List<JobRequest> batch = new ArrayList<>();
        for (int i = 0; i < JOBS; i++) {
            batch.add(JobRequest.of("q", "work", "job-" + i));
        }
        jobs.enqueueAll(batch);
        AtomicInteger ran = new AtomicInteger();
        pool = WorkerPool.builder(jobs, "q").workerId("w").concurrency(CONCURRENCY)
                .handler("work", ctx -> ran.incrementAndGet()).build().start();
        Await.until("every job done", Duration.ofSeconds(60),
                () -> jobs.admin().countByState("q").get(JobState.SUCCEEDED) == JOBS);

        assertThat(ran.get()).isEqualTo(JOBS);
        double perClaim = (double) JOBS / claims.get();
        System.out.printf(java.util.Locale.ROOT, "%s: %d jobs in %d claims, %.2f a claim%n", database, JOBS, claims.get(), perClaim);
        // a whole batch is 8; a pool claiming for each handler as it freed averaged about half that
        assertThat(perClaim).as("jobs per claim (%d claims)", claims.get()).isGreaterThanOrEqualTo(6.0);
    }

    /** {@code ds}, counting each execution of a claim (the statement that makes jobs RUNNING). */
    private DataSource countingClaims(DataSource ds) {
        InvocationHandler dataSource = (proxy, method, args) -> {
            Object result = invoke(ds, method, args);
            return method.getName().equals("getConnection") ? connection((Connection) result) : result;
        };
        return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, dataSource);
    }

    private Connection connection(Connection c) {
        InvocationHandler handler = (proxy, method, args) -> {
            Object result = invoke(c, method, args);
            if (method.getName().equals("prepareStatement") && ((String) args[0]).contains("SET state = 'RUNNING'")) {
                return claimStatement((PreparedStatement) result);
            }
            return result;
        };
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, handler);
    }

    private PreparedStatement claimStatement(PreparedStatement ps) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getName().startsWith("execute") && (args == null || args.length == 0)) {
                claims.incrementAndGet();
            }
            return invoke(ps, method, args);
        };
        return (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {PreparedStatement.class},
                handler);
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
