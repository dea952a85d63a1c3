package dev.stagger.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the command lands. */
@Command(name = "simulate", description = "(not built yet)")
final class SimulateCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("stagger simulate: not built yet");
        return 2;
    }
}
