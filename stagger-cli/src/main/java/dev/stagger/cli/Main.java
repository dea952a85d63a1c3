package dev.stagger.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code stagger} command. */
@Command(name = "stagger", mixinStandardHelpOptions = true, version = "stagger 0.1.0",
        description = "Retrying safely: backoff with jitter, budgets, breakers, idempotency keys, durable jobs.",
        subcommands = {DemoCommand.class, SimulateCommand.class, RunCommand.class, HttpCommand.class, JobsCommand.class, RabbitMqCommand.class,
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns the exit code (2 for bad arguments). */
    public static int run(String... args) {
        CommandLine cli = configure(new CommandLine(new Main()));
        CommandLine run = cli.getSubcommands().get("run");
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
        cli.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println("stagger: " + ex.getMessage()
                    + " (see '" + ex.getCommandLine().getCommandName() + " --help')");
            return 2;
        });
        return cli;
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
