package dev.stagger.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the command lands. */
@Command(name = "jobs", description = "(not built yet)")
final class JobsCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("stagger jobs: not built yet");
        return 2;
    }
}
