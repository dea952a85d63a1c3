package dev.stagger.cli;

import dev.stagger.Backoff;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code stagger run}: runs a command, retrying failed runs with backoff and jitter. */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Run a command, retrying it with exponential backoff and jitter while it fails.",
            "stdin, stdout and stderr pass straight through; each retry logs one line to stderr.",
            "",
            "Examples:",
            "  stagger run -- curl -fsS https://example.com/health",
            "  stagger run --attempts 8 --base 500ms --deadline 1m -- ./deploy.sh",
            "  stagger run --retry-on-exit 75,111 --jitter equal -- rsync -a src/ host:dst/",
            ""},
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0..255  the last attempt's exit code (0 when it succeeded)",
            "  2       bad arguments",
            "  124     the deadline ended the run: the command was stopped, or the",
            "          next wait would have passed it",
            "  125     stagger itself failed",
            "  126     the command could not be executed (e.g. permission denied)",
            "  127     the command was not found",
            "  130     interrupted (Ctrl-C); the running command is stopped first",
            "A command killed by signal N reports 128+N, as in a shell."})
final class RunCommand implements Callable<Integer> {
    static final int EXIT_DEADLINE = 124;
    static final int EXIT_FAILED = 125;
    static final int EXIT_CANNOT_EXECUTE = 126;
    static final int EXIT_NOT_FOUND = 127;
    static final int EXIT_INTERRUPTED = 130;
    private static final long STOP_GRACE_MILLIS = 2_000;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--attempts", defaultValue = "5", paramLabel = "N",
            description = "Total attempts, the first included (default ${DEFAULT-VALUE}).")
    int attempts;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--base", defaultValue = "1s", converter = Durations.class, paramLabel = "D",
            description = "Wait before the first retry, doubled after each (default ${DEFAULT-VALUE}). Durations: 200ms, 5s, 1m, 1h, 7d.")
    Duration base;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--max-delay", defaultValue = "30s", converter = Durations.class, paramLabel = "D",
            description = "Ceiling on every wait, jitter included (default ${DEFAULT-VALUE}).")
    Duration maxDelay;

    @Option(names = "--deadline", converter = Durations.class, paramLabel = "D",
            description = "Time limit for all attempts and waits together; a running command is stopped when it passes (exit 124).")
    @Nullable Duration deadline;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--jitter", defaultValue = "full", paramLabel = "KIND",
            description = "full | equal | none | proportional | proportional(f) | spread | spread(f) | decorrelated (default ${DEFAULT-VALUE}).")
    String jitter;

    @Option(names = "--retry-on-exit", paramLabel = "CODES",
            description = "Exit codes to retry, e.g. 1,75-78 (default: any non-zero). Others end the run at once.")
    @Nullable String retryOnExit;

    @Option(names = {"-q", "--quiet"}, description = "Do not log retries.")
    boolean quiet;

    /**
     * Set by the shutdown hook (SIGTERM, Ctrl-C): no command may be left running once the JVM
     * exits. Starting a command and publishing it in {@code running} happen under
     * {@link #starting}, so the hook either sees the command or keeps it from starting.
     */
    private boolean exiting;
    private final ReentrantLock starting = new ReentrantLock();
    /** The backoff of the flags, made (and so checked) in {@link #validate()}. */
    private @Nullable Backoff backoff;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "The command and its arguments (a leading -- is optional).")
    List<String> command;

    @Override
    public Integer call() {
        RunExitCodes retryable = validate();
        PrintStream err = System.err;
        AtomicReference<Process> running = new AtomicReference<>();
        AtomicReference<EndReason> ended = new AtomicReference<>();
        Thread stopper = new Thread(() -> {
            Process current;
            starting.lock(); // a command being started is in `running` once we hold the lock
            try {
                exiting = true; // and no command starts after this
                current = running.get();
            } finally {
                starting.unlock();
            }
            stop(current);
        }, "stagger-run-stop");
        Runtime.getRuntime().addShutdownHook(stopper);
        try {
            RetryPolicy.Builder policy = RetryPolicy.builder()
                    .maxAttempts(attempts)
                    .backoff(Objects.requireNonNull(backoff, "backoff")) // made by validate()
                    .abortOn(Exception.class) // an exception means the command could not be run: never retried
                    .retryOnResult(Integer.class, code -> retryable.retries(code));
            if (deadline != null) {
                policy.deadline(deadline);
            }
            Retry retry = Retry.of("run", policy.build()).withListener(new RetryListener() {
                @Override
                public void onRetryScheduled(RetryEvent.RetryScheduled e) {
                    if (!quiet) {
                        err.printf(Locale.ROOT, "stagger run: attempt %d/%d exited with %s; retrying in %s%n",
                                e.nextAttempt() - 1, attempts, e.result(), human(e.delay()));
                    }
                }

                @Override
                public void onCallFinished(RetryEvent.CallFinished e) {
                    ended.set(e.reason());
                }
            });
            int code = retry.call(ctx -> runOnce(running, ctx.remaining().orElse(null)));
            EndReason reason = ended.get();
            if (reason == EndReason.INTERRUPTED || Thread.currentThread().isInterrupted()) {
                note(err, "interrupted");
                return EXIT_INTERRUPTED;
            }
            if (reason == EndReason.DEADLINE) {
                note(err, "deadline " + deadlineText() + " would pass before the next attempt; last exit code " + code);
                return EXIT_DEADLINE;
            }
            if (reason == EndReason.EXHAUSTED) {
                note(err, "giving up after " + attempts + " attempts; last exit code " + code);
            }
            return code;
        } catch (DeadlinePassed e) {
            note(err, "deadline " + deadlineText() + " passed; the command was stopped");
            return EXIT_DEADLINE;
        } catch (InterruptedException e) {
            stop(running.get());
            Thread.currentThread().interrupt();
            note(err, "interrupted");
            return EXIT_INTERRUPTED;
        } catch (IOException e) {
            err.println("stagger run: " + e.getMessage());
            String m = String.valueOf(e.getMessage());
            return m.contains("error=2,") || m.contains("No such file") ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE;
        } catch (Exception e) {
            err.println("stagger run: " + e);
            return EXIT_FAILED;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stopper);
            } catch (IllegalStateException shuttingDown) {
                // the JVM is exiting; the hook stops the command
            }
        }
    }

    private RunExitCodes validate() {
        if (attempts < 1) {
            throw bad("--attempts must be at least 1, got " + attempts);
        }
        if (base.isZero()) {
            throw bad("--base must be positive, got " + base.toMillis() + "ms");
        }
        if (maxDelay.compareTo(base) < 0) {
            throw bad("--max-delay must be at least --base, got " + human(maxDelay) + " < " + human(base));
        }
        if (deadline != null && deadline.isZero()) {
            throw bad("--deadline must be positive, got 0");
        }
        try {
            backoff = BackoffFlags.backoff(base, maxDelay, jitter);
            return retryOnExit == null ? RunExitCodes.anyNonZero() : RunExitCodes.parse(retryOnExit);
        } catch (IllegalArgumentException e) {
            throw bad(e.getMessage());
        }
    }

    /** One attempt: start the command, wait for it (within what is left of the deadline). */
    private int runOnce(AtomicReference<Process> running, @Nullable Duration remaining) throws Exception {
        Process process;
        starting.lock();
        try {
            if (exiting) {
                throw new InterruptedException("stagger is exiting");
            }
            process = new ProcessBuilder(command).inheritIO().start();
            running.set(process);
        } finally {
            starting.unlock();
        }
        try {
            if (remaining == null) {
                return process.waitFor();
            }
            if (process.waitFor(remaining.toNanos(), TimeUnit.NANOSECONDS)) {
                return process.exitValue();
            }
            stop(process);
            throw new DeadlinePassed();
        } catch (InterruptedException e) {
            stop(process);
            throw e;
        } finally {
            running.set(null);
        }
    }

    /** Asks the command to stop (SIGTERM), then kills it if it is still there after a grace period. */
    private static void stop(@Nullable Process process) {
        if (process == null || !process.isAlive()) {
            return;
        }
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(STOP_GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private void note(PrintStream err, String message) {
        if (!quiet) {
            err.println("stagger run: " + message);
        }
    }

    private CommandLine.ParameterException bad(@Nullable String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    /** The --deadline as the notes print it: only a call with a deadline ends on it. */
    private String deadlineText() {
        return human(Objects.requireNonNull(deadline, "deadline"));
    }

    static String human(Duration d) {
        long ms = d.toMillis();
        if (ms < 10_000) {
            return ms + "ms";
        }
        return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
    }

    /** The deadline passed while the command was running; it has been stopped. */
    private static final class DeadlinePassed extends Exception {
        private static final long serialVersionUID = 1L;

        DeadlinePassed() {
            super("deadline passed", null, false, false);
        }
    }
}
