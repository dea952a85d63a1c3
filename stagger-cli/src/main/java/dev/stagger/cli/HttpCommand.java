package dev.stagger.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the command lands. */
@Command(name = "http", description = "(not built yet)")
final class HttpCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("stagger http: not built yet");
        return 2;
    }
}
