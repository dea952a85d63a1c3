package dev.stagger.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the command lands. */
@Command(name = "run", description = "(not built yet)")
final class RunCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("stagger run: not built yet");
        return 2;
    }
}
