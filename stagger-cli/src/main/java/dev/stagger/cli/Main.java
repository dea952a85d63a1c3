package dev.stagger.cli;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code stagger} command. One rule for every command: asking for help ({@code --help},
 * {@code help}) prints the usage to stdout and exits 0; a usage error (no subcommand where one is
 * needed, an unknown command or option, a bad value) prints one line to stderr, or the usage when
 * only a subcommand is missing, and exits 2. Other codes are each command's own.
 */
@Command(name = "stagger", mixinStandardHelpOptions = true, version = "stagger 0.1.0",
        description = "Retrying safely: backoff with jitter, budgets, breakers, idempotency keys, durable jobs.",
        subcommands = {DemoCommand.class, SimulateCommand.class, RunCommand.class, HttpCommand.class, JobsCommand.class, RabbitMqCommand.class,
                KafkaCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Callable<Integer> {
    /** Exit code of every usage error. */
    static final int EXIT_USAGE = 2;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns the exit code (2 for bad arguments). */
    public static int run(String... args) {
        CommandLine cli = configure(new CommandLine(new Main()));
        CommandLine run = Objects.requireNonNull(cli.getSubcommands().get("run"), "the run command");
        // everything after the command's name belongs to the command: `stagger run curl -s URL`
        run.setStopAtPositional(true);
        return cli.execute(args);
    }

    /**
     * The parser settings every stagger command runs with: bad arguments print one line and exit
     * 2, and {@code @FILE} is left to the commands (picocli would otherwise expand it as an
     * argument file, so {@code stagger http --data @body.json} would never see the {@code @}).
     */
    static CommandLine configure(CommandLine cli) {
        cli.setExpandAtFiles(false);
        cli.registerConverter(Duration.class, new Durations()); // one duration syntax, for every option of every command
        cli.setParameterExceptionHandler((ex, args) -> {
            String name = ex.getCommandLine().getCommandSpec().qualifiedName();
            ex.getCommandLine().getErr().println(name + ": " + describe(ex) + " (see '" + name + " --help')");
            return EXIT_USAGE;
        });
        return cli;
    }

    /** picocli's message, except that an unknown word is named, with the closest known one. */
    static @Nullable String describe(ParameterException ex) {
        List<String> unknown = ex.getCommandLine().getUnmatchedArguments();
        if (!(ex instanceof UnmatchedArgumentException) && !unknown.isEmpty()) {
            // "--dbb x" is first of all a typo, then a missing --db: name the typo
            ex = new UnmatchedArgumentException(ex.getCommandLine(), unknown);
        }
        if (!(ex instanceof UnmatchedArgumentException unmatched) || unmatched.getUnmatched().isEmpty()) {
            return ex.getMessage();
        }
        String word = unmatched.getUnmatched().get(0);
        boolean option = word.startsWith("-");
        boolean hasSubcommands = !ex.getCommandLine().getSubcommands().isEmpty();
        String problem = option ? "unknown option '" + word + "'"
                : hasSubcommands ? "unknown command '" + word + "'"
                : "unexpected argument '" + word + "'";
        List<String> suggestions = unmatched.getSuggestions();
        return suggestions.isEmpty() ? problem : problem + "; did you mean '" + suggestions.get(0) + "'?";
    }

    /** {@code stagger} alone: a subcommand is missing, which is a usage error like any other. */
    @Override
    public Integer call() {
        return usage(spec);
    }

    /** Prints the command's usage to stderr and returns the usage-error exit code. */
    static int usage(CommandLine.Model.CommandSpec spec) {
        spec.commandLine().usage(spec.commandLine().getErr());
        return EXIT_USAGE;
    }
}
