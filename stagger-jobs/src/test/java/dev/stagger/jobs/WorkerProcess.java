package dev.stagger.jobs;

import dev.stagger.jdbc.UrlDataSource;
import java.time.Duration;

/**
 * A worker in its own JVM, started by the multi-process tests:
 * {@code WorkerProcess URL USER PASSWORD PREFIX QUEUE LEASE_MILLIS HANDLER_MILLIS NAME}. Prints
 * "ready" once its pool runs, then works until killed (SIGTERM shuts the pool down gracefully).
 */
public final class WorkerProcess {
    private WorkerProcess() {
    }

    public static void main(String[] args) throws Exception {
        UrlDataSource ds = UrlDataSource.of(args[0], args[1], args[2]);
        String prefix = args[3];
        String queue = args[4];
        Duration lease = Duration.ofMillis(Long.parseLong(args[5]));
        long handlerMillis = Long.parseLong(args[6]);
        String name = args[7];
        JobQueue jobs = JobQueue.builder(ds).tablePrefix(prefix).build();
        RunLog log = new RunLog(ds, prefix);
        WorkerPool pool = WorkerPool.builder(jobs, queue).workerId(name).concurrency(4)
                .handler("work", log.recording(name, handlerMillis))
                .lease(lease).rescueInterval(Duration.ofMillis(200)).pollInterval(Duration.ofMillis(200))
                .shutdownTimeout(Duration.ofSeconds(5)).build();
        Runtime.getRuntime().addShutdownHook(new Thread(pool::close));
        pool.start();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
