package dev.stagger.cli;

import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.StoreException;
import dev.stagger.jdbc.UrlDataSource;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.JobState;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stagger jobs}: operate a job store (stagger-jobs) from the shell: counts and lists,
 * dead jobs with their error history, re-drive, purge. Exit codes: 0 done, 1 nothing matched,
 * 2 bad arguments, 3 database error.
 */
@Command(name = "jobs", mixinStandardHelpOptions = true,
        description = "Operate a job store: list, dead, redrive, purge.",
        subcommands = {JobsCommand.ListJobs.class, JobsCommand.Dead.class, JobsCommand.Redrive.class,
                JobsCommand.Purge.class})
final class JobsCommand implements Callable<Integer> {
    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Spec
    CommandLine.Model.CommandSpec spec;

    /** {@code stagger jobs} alone: a usage error, as {@code stagger} alone. */
    @Override
    public Integer call() {
        return Main.usage(spec);
    }

    /** Options every subcommand takes. */
    static final class Store {
        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Option(names = "--db", required = true, paramLabel = "URL",
                description = "jdbc:sqlite:FILE, jdbc:postgresql://HOST/DB, or a SQLite file path")
        String db;

        @Option(names = "--user", description = "database user (PostgreSQL)")
        @Nullable String user;

        @Option(names = "--password", description = "database password (PostgreSQL)")
        @Nullable String password;

        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Option(names = "--table-prefix", defaultValue = "stagger_", description = "table prefix (default: ${DEFAULT-VALUE})")
        String tablePrefix;

        @Option(names = "--queue", paramLabel = "Q", description = "only this queue")
        @Nullable String queue;

        /** The store, never created or changed here: a database without Stagger's schema is refused. */
        JobQueue open() {
            DataSource ds;
            if (db.startsWith("jdbc:sqlite:")) {
                ds = sqlite(db.substring("jdbc:sqlite:".length()));
            } else if (db.startsWith("jdbc:")) {
                ds = UrlDataSource.of(db, user, password == null ? "" : password);
            } else {
                ds = sqlite(db);
            }
            return JobQueue.builder(ds).tablePrefix(tablePrefix).schemaMode(SchemaMode.VALIDATE).build();
        }

        private static DataSource sqlite(String file) {
            Path path = Path.of(file);
            if (!Files.isRegularFile(path)) {
                throw new IllegalArgumentException("no SQLite database at " + path.toAbsolutePath());
            }
            return SqliteDataSource.file(path);
        }
    }

    /** Runs a subcommand body, turning failures into messages and exit codes. */
    abstract static class Base implements Callable<Integer> {
        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Spec
        CommandLine.Model.CommandSpec spec;

        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Mixin
        Store store;

        abstract int run(JobQueue jobs, PrintWriter out);

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try {
                int code = run(store.open(), out);
                out.flush();
                return code;
            } catch (IllegalArgumentException e) {
                err.println("stagger jobs: " + e.getMessage());
                return Main.EXIT_USAGE;
            } catch (SchemaNotReadyException e) {
                err.println("stagger jobs: no job store with table prefix '" + store.tablePrefix + "' here: " + e.getMessage());
                return Main.EXIT_USAGE;
            } catch (Exception e) { // a store's unchecked exception wrapping the driver's SQLException
                if (DatabaseErrors.sqlCause(e) == null) {
                    throw e;
                }
                err.println("stagger jobs: " + DatabaseErrors.describe(store.db, e));
                return 3;
            }
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Count jobs by state; with --state, list jobs in that state.")
    static final class ListJobs extends Base {
        @Option(names = "--state", description = "AVAILABLE, RUNNING, SUCCEEDED or DEAD")
        @Nullable JobState state;

        @Option(names = "--limit", defaultValue = "50", description = "most jobs listed (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        int run(JobQueue jobs, PrintWriter out) {
            Map<JobState, Long> counts = jobs.admin().countByState(store.queue);
            for (Map.Entry<JobState, Long> e : counts.entrySet()) {
                out.printf(Locale.ROOT, "%-10s %d%n", e.getKey(), e.getValue());
            }
            if (state != null) {
                out.println();
                printJobs(out, jobs.admin().list(state, store.queue, limit));
            }
            return 0;
        }
    }

    @Command(name = "dead", mixinStandardHelpOptions = true,
            description = "List dead jobs; with --id, show one dead job's error history.")
    static final class Dead extends Base {
        @Option(names = "--id", description = "the job to inspect")
        @Nullable Long id;

        @Option(names = "--limit", defaultValue = "50", description = "most jobs listed (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        int run(JobQueue jobs, PrintWriter out) {
            if (id == null) {
                List<Job> dead = jobs.admin().dead(store.queue, limit);
                printJobs(out, dead);
                return 0;
            }
            Job job = jobs.admin().find(id).orElse(null);
            if (job == null) {
                spec.commandLine().getErr().println("stagger jobs: no job " + id);
                return 1;
            }
            out.println(job);
            out.println("payload: " + job.payloadText());
            for (JobError e : jobs.admin().errors(id)) {
                out.printf(Locale.ROOT, "%nattempt %d at %s: %s: %s%n", e.attempt(), e.failedAt(), e.exceptionClass(),
                        e.message());
                if (!e.stackTrace().isEmpty()) {
                    out.print(e.stackTrace());
                }
            }
            return 0;
        }
    }

    @Command(name = "redrive", mixinStandardHelpOptions = true,
            description = "Put dead jobs back to run now with fresh attempts (their history stays).")
    static final class Redrive extends Base {
        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @ArgGroup(exclusive = true, multiplicity = "1")
        Which which;

        static final class Which {
            @Option(names = "--id", description = "one dead job")
            @Nullable Long id;

            @Option(names = "--all", description = "every dead job (of --queue, if given)")
            boolean all;
        }

        @Override
        int run(JobQueue jobs, PrintWriter out) {
            if (which.all) {
                out.println("re-drove " + jobs.admin().redriveAll(store.queue) + " dead job(s)");
                return 0;
            }
            if (!jobs.admin().redrive(Objects.requireNonNull(which.id, "--id"))) { // --id or --all, picocli checks
                spec.commandLine().getErr().println("stagger jobs: job " + which.id + " is not dead (or does not exist)");
                return 1;
            }
            out.println("re-drove job " + which.id);
            return 0;
        }
    }

    @Command(name = "purge", mixinStandardHelpOptions = true,
            description = "Delete succeeded jobs that finished longer ago than --older-than.")
    static final class Purge extends Base {
        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Option(names = "--older-than", required = true, paramLabel = "D", converter = Durations.class,
                description = "retention: 7d, 12h, 30m, 45s or an ISO-8601 duration (PT12H)")
        Duration olderThan;

        @Override
        int run(JobQueue jobs, PrintWriter out) {
            out.println("purged " + jobs.admin().purge(JobState.SUCCEEDED, olderThan, store.queue) + " succeeded job(s)");
            return 0;
        }
    }

    private static void printJobs(PrintWriter out, List<Job> jobs) {
        out.printf(Locale.ROOT, "%-8s %-12s %-16s %-9s %-7s %s%n", "ID", "QUEUE", "TYPE", "STATE", "ATTEMPT", "RUN AT / FINISHED");
        for (Job j : jobs) {
            out.printf(Locale.ROOT, "%-8d %-12s %-16s %-9s %-7d %s%n", j.id(), j.queue(), j.type(), j.state(), j.attempt(),
                    j.finishedAt() != null ? j.finishedAt() : j.runAt());
        }
        if (jobs.isEmpty()) {
            out.println("(none)");
        }
    }
}
