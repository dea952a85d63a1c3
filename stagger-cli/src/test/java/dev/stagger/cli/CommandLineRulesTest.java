package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The rules every {@code stagger} command follows: usage errors, exit codes, suggestions. */
class CommandLineRulesTest {

    @Test
    void staggerAlonePrintsTheUsageToStderrAndExitsTwo() {
        SimCliRunner.Outcome o = SimCliRunner.run();
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("Usage: stagger", "demo", "simulate", "jobs");
        assertThat(o.out()).isEmpty();
    }

    @Test
    void aCommandGroupAloneFollowsTheSameRule() {
        SimCliRunner.Outcome o = SimCliRunner.run("jobs");
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("Usage: stagger jobs", "list", "purge");
        assertThat(o.out()).isEmpty();
    }

    @Test
    void askingForHelpIsNotAnErrorAndGoesToStdout() {
        for (String[] args : new String[][] {{"--help"}, {"help"}, {"jobs", "--help"}, {"help", "jobs"}}) {
            SimCliRunner.Outcome o = SimCliRunner.run(args);
            assertThat(o.exitCode()).as(String.join(" ", args)).isZero();
            assertThat(o.out()).as(String.join(" ", args)).contains("Usage: stagger");
        }
    }

    @Test
    void anUnknownSubcommandIsNamedAndTheClosestOneSuggested() {
        SimCliRunner.Outcome o = SimCliRunner.run("jobs", "lst", "--db", "x");
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("unknown command 'lst'", "did you mean 'list'?");
        assertThat(o.err()).doesNotContain("Unmatched arguments");
    }

    @Test
    void anUnknownTopLevelCommandIsNamedAndTheClosestOneSuggested() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulat", "--runs", "1");
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("unknown command 'simulat'", "did you mean 'simulate'?");
    }

    @Test
    void anUnknownOptionIsNamedAndTheClosestOneSuggested() {
        SimCliRunner.Outcome o = SimCliRunner.run("jobs", "list", "--dbb", "x");
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("'--dbb'", "did you mean '--db'?");
    }

    @Test
    void everyUsageErrorIsOneLineOnStderr() {
        SimCliRunner.Outcome o = SimCliRunner.run("jobs", "lst");
        assertThat(o.err().strip().lines()).hasSize(1);
    }
}
