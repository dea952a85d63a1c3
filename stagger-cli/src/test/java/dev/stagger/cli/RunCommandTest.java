package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunCommandTest {

    @Test
    void aCommandThatSucceedsRunsOnceAndExitsZero() {
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--base", "1ms", "--", "true");
        assertThat(o.exitCode()).isZero();
        assertThat(o.err()).isEmpty();
    }

    @Test
    void theCommandsOwnOptionsNeedNoDoubleDash() {
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--attempts", "2", "--base", "1ms", "sh", "-c", "exit 3");
        assertThat(o.exitCode()).isEqualTo(3);
        assertThat(o.err()).contains("attempt 1");
    }

    @Test
    void aCommandThatKeepsFailingIsRetriedThenItsExitCodeIsReturned() {
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--attempts", "3", "--base", "1ms", "--", "false");
        assertThat(o.exitCode()).isEqualTo(1);
        assertThat(o.err().lines().filter(l -> l.contains("retrying in"))).hasSize(2);
        assertThat(o.err()).contains("attempt 1/3 exited with 1; retrying in")
                .contains("attempt 2/3 exited with 1; retrying in")
                .contains("giving up after 3 attempts; last exit code 1");
    }

    @Test
    void aScriptThatFailsTwiceThenSucceedsEndsWithZeroAfterThreeRuns(@TempDir Path dir) throws Exception {
        Path counter = dir.resolve("count");
        Path script = script(dir, "flaky.sh", """
                #!/bin/sh
                n=$(cat "$1" 2>/dev/null || echo 0)
                n=$((n + 1))
                echo "$n" > "$1"
                [ "$n" -ge 3 ]
                """);
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--attempts", "5", "--base", "1ms", "--max-delay", "5ms",
                "--", script.toString(), counter.toString());
        assertThat(o.exitCode()).isZero();
        assertThat(Files.readString(counter).strip()).isEqualTo("3");
        assertThat(o.err().lines().filter(l -> l.contains("retrying in"))).hasSize(2);
    }

    @Test
    void exitCodesNotListedAreNotRetried(@TempDir Path dir) throws Exception {
        Path counter = dir.resolve("count");
        Path script = script(dir, "exit3.sh", "#!/bin/sh\necho x >> \"$1\"\nexit 3\n");
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--retry-on-exit", "1,75-78", "--base", "1ms", "--",
                script.toString(), counter.toString());
        assertThat(o.exitCode()).isEqualTo(3);
        assertThat(Files.readAllLines(counter)).hasSize(1);
    }

    @Test
    void exitCodesInARangeAreRetried(@TempDir Path dir) throws Exception {
        Path counter = dir.resolve("count");
        Path script = script(dir, "exit76.sh", "#!/bin/sh\necho x >> \"$1\"\nexit 76\n");
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--attempts", "2", "--retry-on-exit", "1,75-78", "--base",
                "1ms", "--quiet", "--", script.toString(), counter.toString());
        assertThat(o.exitCode()).isEqualTo(76);
        assertThat(Files.readAllLines(counter)).hasSize(2);
        assertThat(o.err()).isEmpty();
    }

    @Test
    void aCommandThatOutlivesTheDeadlineIsStoppedWithExit124() {
        long t0 = System.nanoTime();
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--deadline", "300ms", "--base", "1ms", "--", "sleep", "10");
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertThat(o.exitCode()).isEqualTo(RunCommand.EXIT_DEADLINE);
        assertThat(o.err()).contains("deadline 300ms passed");
        assertThat(ms).isLessThan(9_000); // far less than the command's 10 s, with room for a loaded machine
    }

    @Test
    void aWaitThatWouldPassTheDeadlineEndsTheRunWith124() {
        // the deadline is long enough for `false` to run on a loaded machine, the wait far longer than it
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--deadline", "20s", "--base", "1h", "--max-delay", "1h",
                "--jitter", "none", "--", "false");
        assertThat(o.exitCode()).isEqualTo(RunCommand.EXIT_DEADLINE);
        assertThat(o.err()).contains("would pass before the next attempt; last exit code 1");
    }

    @Test
    void anInterruptStopsTheCommandAndExitsWith130(@TempDir Path dir) throws Exception {
        Path pidFile = dir.resolve("child.pid");
        AtomicReference<SimCliRunner.Outcome> outcome = new AtomicReference<>();
        Thread runner = new Thread(() -> outcome.set(SimCliRunner.run("run", "--", "sh", "-c",
                "echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + " && exec sleep 60")));
        runner.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.exists(pidFile) && System.nanoTime() < deadline && runner.isAlive()) {
                Thread.sleep(5); // polling for the command to exist, not timing a delay
            }
            assertThat(pidFile).as("the command started").exists();
            long child = Long.parseLong(Files.readString(pidFile).strip());

            runner.interrupt();
            runner.join(30_000);
            assertThat(runner.isAlive()).isFalse();
            assertThat(outcome.get().exitCode()).isEqualTo(RunCommand.EXIT_INTERRUPTED);
            assertThat(outcome.get().err()).contains("interrupted");
            assertThat(ProcessHandle.of(child).map(ProcessHandle::isAlive).orElse(false))
                    .as("the command was stopped").isFalse();
        } finally {
            if (Files.exists(pidFile)) { // a failed run must not leave the sleep behind
                ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip())).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    @Test
    void sigtermToStaggerStopsTheRunningCommandBeforeItExits(@TempDir Path dir) throws Exception {
        Path pidFile = dir.resolve("child.pid");
        Process stagger = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "run", "--quiet", "--",
                "sh", "-c", "echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + " && exec sleep 60")
                .redirectErrorStream(true).redirectOutput(dir.resolve("stagger.log").toFile()).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.exists(pidFile) && System.nanoTime() < deadline && stagger.isAlive()) {
                Thread.sleep(2); // polling for the child to exist (soon after it does is the racy moment), not timing a delay
            }
            assertThat(pidFile).as("the command started").exists();
            long child = Long.parseLong(Files.readString(pidFile).strip());
            assertThat(ProcessHandle.of(child).map(ProcessHandle::isAlive)).contains(true);

            stagger.destroy(); // SIGTERM
            assertThat(stagger.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(stagger.exitValue()).isEqualTo(128 + 15);
            assertThat(ProcessHandle.of(child).map(ProcessHandle::isAlive).orElse(false))
                    .as("the command was stopped before stagger exited").isFalse();
        } finally {
            stagger.destroyForcibly();
            if (Files.exists(pidFile)) { // a failed run must not leave the sleep behind
                ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip())).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    @Test
    void aMissingCommandExitsWith127() {
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--", "/nonexistent/stagger-test-command");
        assertThat(o.exitCode()).isEqualTo(RunCommand.EXIT_NOT_FOUND);
    }

    @Test
    void aFileThatIsNotExecutableExitsWith126(@TempDir Path dir) throws Exception {
        Path plain = Files.writeString(dir.resolve("plain.txt"), "not a program");
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--", plain.toString());
        assertThat(o.exitCode()).isEqualTo(RunCommand.EXIT_CANNOT_EXECUTE);
    }

    @Test
    void badValuesAreOneLineErrorsWithExitTwo() {
        for (String[] args : new String[][] {
                {"run", "--attempts", "0", "--", "true"},
                {"run", "--base", "soon", "--", "true"},
                {"run", "--base", "2s", "--max-delay", "1s", "--", "true"},
                {"run", "--jitter", "wild", "--", "true"},
                {"run", "--jitter", "spread(2)", "--", "true"},
                {"run", "--retry-on-exit", "1,300", "--", "true"},
                {"run", "--deadline", "0", "--", "true"},
                {"run"}}) {
            SimCliRunner.Outcome o = SimCliRunner.run(args);
            assertThat(o.exitCode()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(o.err().strip().lines()).as(String.join(" ", args)).hasSize(1);
        }
    }

    @Test
    void everyJitterKindRuns() {
        for (String kind : new String[] {"full", "equal", "none", "proportional", "spread", "decorrelated",
                "spread(0.5)", "Proportional(0.1)"}) {
            SimCliRunner.Outcome o = SimCliRunner.run("run", "--attempts", "2", "--base", "1ms", "--jitter", kind,
                    "--quiet", "--", "false");
            assertThat(o.exitCode()).as(kind).isEqualTo(1);
        }
    }

    @Test
    void helpDocumentsTheExitCodes() {
        SimCliRunner.Outcome o = SimCliRunner.run("run", "--help");
        assertThat(o.exitCode()).isZero();
        assertThat(o.out()).contains("Examples:").contains("124").contains("127");
    }

    private static Path script(Path dir, String name, String body) throws Exception {
        Path p = dir.resolve(name);
        Files.writeString(p, body);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
        return p;
    }
}
