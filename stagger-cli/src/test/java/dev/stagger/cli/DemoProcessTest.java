package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

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

/** {@code stagger demo} as a real process, stopped with SIGTERM as Ctrl-C or a service manager would. */
class DemoProcessTest {
    private static final Pattern DATA_DIR = Pattern.compile("\\(data in (.+?)(?:, removed on exit)?;");

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
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "demo", "--port", "0"));
        command.addAll(List.of(extra));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
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

    private static void stop(Process demo) throws Exception {
        demo.destroy(); // SIGTERM
        assertThat(demo.waitFor(30, TimeUnit.SECONDS)).as("the demo stops on SIGTERM").isTrue();
    }
}
