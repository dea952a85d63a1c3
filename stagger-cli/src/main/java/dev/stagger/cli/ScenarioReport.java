package dev.stagger.cli;

import java.io.PrintStream;

/** What `stagger simulate` prints of a scenario's runs: a table for a person or JSON for a program. */
interface ScenarioReport {
    void table(PrintStream out);

    void json(PrintStream out) throws Exception;
}
