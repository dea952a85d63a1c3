package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.Services;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stagger demo} as a real process, stopped with SIGINT as Ctrl-C in a terminal does, and
 * with SIGTERM as a service manager does.
 */
class DemoProcessTest {
    private static final Pattern DATA_DIR = Pattern.compile("\\(data in (.+?)(?:, removed on exit)?;");
    /** SIGINT's bit in the signal masks of /proc/PID/status (signal n is bit n - 1). */
    private static final long SIGINT_BIT = 1L << 1;

    /**
     * Ctrl-C in a terminal sends SIGINT to the foreground job, which an interactive shell starts
     * with SIGINT at its default disposition. A process started by a build or CI may inherit SIGINT
     * as ignored (a non-interactive shell ignores it for background commands), and a JVM keeps an
     * inherited "ignored" for its shutdown signals, so this test starts the demo through
     * {@code env --default-signal=INT}, as the terminal's shell would, and checks that it did.
     */
    @Test
    void theTemporaryDataDirectoryIsRemovedOnCtrlC() throws Exception {
        Process demo = startAsFromATerminal();
        try {
            Path dir = dataDir(demo);
            assertThat(dir.resolve("jobs.db")).exists();
            pressCtrlC(demo);
            assertThat(demo.exitValue()).as("exit code after SIGINT").isEqualTo(130);
            assertThat(dir).doesNotExist();
        } finally {
            demo.destroyForcibly();
        }
    }

    @Test
    void aGivenDataDirectoryIsKeptOnCtrlC(@TempDir Path parent) throws Exception {
        Path given = parent.resolve("demo-data");
        Process demo = startAsFromATerminal("--data-dir", given.toString());
        try {
            assertThat(dataDir(demo)).isEqualTo(given);
            pressCtrlC(demo);
            assertThat(given.resolve("jobs.db")).exists();
        } finally {
            demo.destroyForcibly();
        }
    }

    @Test
    void theTemporaryDataDirectoryIsRemovedOnSigterm() throws Exception {
        Process demo = start();
        try {
            Path dir = dataDir(demo);
            assertThat(dir).isDirectory();
            assertThat(dir.resolve("jobs.db")).exists();
            stop(demo);
            assertThat(dir).doesNotExist();
        } finally {
            demo.destroyForcibly();
        }
    }

    @Test
    void aGivenDataDirectoryIsKeptOnSigterm(@TempDir Path parent) throws Exception {
        Path given = parent.resolve("demo-data");
        Process demo = start("--data-dir", given.toString());
        try {
            assertThat(dataDir(demo)).isEqualTo(given);
            stop(demo);
            assertThat(given).isDirectory();
            assertThat(given.resolve("jobs.db")).exists();
        } finally {
            demo.destroyForcibly();
        }
    }

    private static Process start(String... extra) throws Exception {
        return start(List.of(), extra);
    }

    private static Process start(List<String> prefix, String... extra) throws Exception {
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "demo", "--port", "0"));
        command.addAll(List.of(extra));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** The demo with SIGINT at its default disposition, as a terminal's shell starts a foreground command. */
    private static Process startAsFromATerminal(String... extra) throws Exception {
        String message = "GNU env with --default-signal (coreutils 8.31 or later) is needed to start the demo "
                + "with SIGINT not ignored, as a terminal does";
        boolean present = exitCode("env", "--default-signal=INT", "true") == 0;
        Services.require("GNU env --default-signal", present, message);
        return start(List.of("env", "--default-signal=INT"), extra);
    }

    /** Where the kernel shows it (Linux): the demo's JVM catches SIGINT, neither ignoring it nor dying of it. */
    private static void assertSigintIsHandled(Process demo) throws Exception {
        Path status = Path.of("/proc", Long.toString(demo.pid()), "status");
        if (!Files.isReadable(status)) {
            return; // no /proc: the removed directory below is the proof
        }
        List<String> lines = Files.readAllLines(status);
        assertThat(mask(lines, "SigIgn:") & SIGINT_BIT).as("SIGINT ignored by the demo (%s)", lines).isZero();
        assertThat(mask(lines, "SigCgt:") & SIGINT_BIT).as("SIGINT caught by the demo's JVM (%s)", lines).isNotZero();
    }

    private static long mask(List<String> statusLines, String field) {
        return statusLines.stream().filter(l -> l.startsWith(field))
                .mapToLong(l -> Long.parseUnsignedLong(l.substring(field.length()).trim(), 16))
                .findFirst().orElseThrow(() -> new AssertionError("no " + field + " in /proc status"));
    }

    /** {@code kill -s NAME pid}: Java can send SIGTERM and SIGKILL only. */
    private static void signal(Process demo, String name) throws Exception {
        assertThat(exitCode("sh", "-c", "kill -s " + name + " \"$0\"", Long.toString(demo.pid())))
                .as("kill -s %s %s", name, demo.pid()).isZero();
    }

    private static int exitCode(String... command) throws Exception {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as(String.join(" ", command)).isTrue();
            return p.exitValue();
        } catch (java.io.IOException notFound) {
            return 127;
        }
    }

    /** The data directory the demo announces on its first line. */
    private static Path dataDir(Process demo) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(demo.getInputStream(), StandardCharsets.UTF_8));
        String line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }).get(60, TimeUnit.SECONDS);
        assertThat(line).as("the demo's first line").isNotNull().contains("Stagger demo running at");
        Matcher m = DATA_DIR.matcher(line);
        assertThat(m.find()).as(line).isTrue();
        return Path.of(m.group(1));
    }

    /** SIGINT, as Ctrl-C in a terminal sends it, to a demo that handles it; waits for it to stop. */
    private static void pressCtrlC(Process demo) throws Exception {
        assertSigintIsHandled(demo);
        signal(demo, "INT");
        assertThat(demo.waitFor(30, TimeUnit.SECONDS)).as("the demo stops on SIGINT").isTrue();
    }

    private static void stop(Process demo) throws Exception {
        demo.destroy(); // SIGTERM
        assertThat(demo.waitFor(30, TimeUnit.SECONDS)).as("the demo stops on SIGTERM").isTrue();
    }
}
