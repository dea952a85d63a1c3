package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The one duration syntax of every command: a number with a unit. */
class DurationsTest {

    @Test
    void readsEveryUnit() {
        assertThat(Durations.parse("200ms")).isEqualTo(Duration.ofMillis(200));
        assertThat(Durations.parse("5s")).isEqualTo(Duration.ofSeconds(5));
        assertThat(Durations.parse("1m")).isEqualTo(Duration.ofMinutes(1));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("1d")).isEqualTo(Duration.ofDays(1));
        assertThat(Durations.parse("7d")).isEqualTo(Duration.ofDays(7));
    }

    @Test
    void readsIso8601() {
        assertThat(Durations.parse("PT12H")).isEqualTo(Duration.ofHours(12));
        assertThat(Durations.parse("pt1.5s")).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void acceptsFractionsCaseAndSpaces() {
        assertThat(Durations.parse(" 1.5S ")).isEqualTo(Duration.ofMillis(1500));
        assertThat(Durations.parse("0s")).isEqualTo(Duration.ZERO);
        assertThat(Durations.parse("0.5d")).isEqualTo(Duration.ofHours(12));
    }

    @Test
    void aBareNumberIsRefusedWithASuggestion() {
        assertThatThrownBy(() -> Durations.parse("5")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'5'").hasMessageContaining("unit").hasMessageContaining("5s");
        assertThatThrownBy(() -> Durations.parse("1500")).hasMessageContaining("1500ms");
    }

    @Test
    void rejectsGarbageNegativesAndUnknownUnitsNamingTheValue() {
        for (String bad : new String[] {"", "soon", "-5s", "5y", "5 sec", "1e3", "PT-5S"}) {
            assertThatThrownBy(() -> Durations.parse(bad)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'" + bad + "'");
        }
    }

    @Test
    void rejectsAbsurdlyLongDurations() {
        assertThatThrownBy(() -> Durations.parse("9999999d")).hasMessageContaining("longer than");
        assertThatThrownBy(() -> Durations.parse("99999999999999999999999h")).hasMessageContaining("longer than");
    }

    @Test
    void echoesAtMost64CharactersOfALongValue() {
        String longValue = "9".repeat(500) + "x";
        assertThatThrownBy(() -> Durations.parse(longValue)).message().hasSizeLessThan(250).contains("501 chars");
    }

    @Test
    void aBareNumberOnTheCommandLineNamesTheFlagAndSuggestsAUnit() {
        SimCliRunner.Outcome o = SimCliRunner.run("http", "http://127.0.0.1:9/", "--deadline", "5");
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("--deadline", "5s");
        assertThat(o.err().strip().lines()).hasSize(1);

        SimCliRunner.Outcome run = SimCliRunner.run("run", "--base", "100", "--", "true");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--base", "100ms");
    }

    @Test
    void everyDurationOptionOfEveryCommandRefusesABareNumber() {
        CommandLine stagger = Main.configure(new CommandLine(new Main()));
        List<String> checked = new ArrayList<>();
        Deque<CommandLine> commands = new ArrayDeque<>(List.of(stagger));
        while (!commands.isEmpty()) {
            CommandLine command = commands.pop();
            commands.addAll(command.getSubcommands().values());
            for (CommandLine.Model.OptionSpec option : command.getCommandSpec().options()) {
                if (option.type() == Duration.class) {
                    assertThatThrownBy(() -> command.parseArgs(option.longestName(), "5"))
                            .as(command.getCommandSpec().qualifiedName() + " " + option.longestName())
                            .hasMessageContaining(option.longestName()).hasMessageContaining("has no unit");
                    checked.add(command.getCommandName() + " " + option.longestName());
                }
            }
        }
        assertThat(checked).contains("run --deadline", "http --deadline", "purge --older-than");
    }

    @Test
    void daysWorkForEveryCommand() {
        assertThat(SimCliRunner.run("run", "--deadline", "1d", "--quiet", "--", "true").exitCode()).isZero();
        assertThat(SimCliRunner.run("run", "--deadline", "PT1H", "--quiet", "--", "true").exitCode()).isZero();
    }
}
