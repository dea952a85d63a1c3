package dev.stagger.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code stagger} command. */
@Command(name = "stagger", mixinStandardHelpOptions = true, version = "stagger 0.1.0",
        description = "Retrying safely: backoff with jitter, budgets, breakers, idempotency keys, durable jobs.",
        subcommands = {DemoCommand.class, SimulateCommand.class, RunCommand.class, HttpCommand.class, JobsCommand.class,
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns the exit code (2 for bad arguments). */
    public static int run(String... args) {
        CommandLine cli = new CommandLine(new Main());
        cli.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println("stagger: " + ex.getMessage()
                    + " (see '" + ex.getCommandLine().getCommandName() + " --help')");
            return 2;
        });
        return cli.execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
