package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.Services;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./stagger} launcher's first run, as a newcomer meets it: a copy of the sources
 * without any build output, stderr to a file (not a terminal), and Maven's real build.
 */
class LauncherTest {
    @TempDir
    static Path copy;
    static String stdout;
    static String stderr;
    static int exit;
    private static final String TIMESTAMPED_LOG =
            "-Dorg.slf4j.simpleLogger.showDateTime=true -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss";

    @BeforeAll
    static void firstRunOnAFreshCopy() throws Exception {
        Services.require("mvn on the PATH", onPath("mvn"), "mvn is not on the PATH: the launcher cannot build");
        Path root = Path.of("").toAbsolutePath().getParent();
        assertThat(root.resolve("stagger")).as("the launcher, next to the root pom").exists();
        copySources(root, copy);
        Path err = copy.resolve("launcher-stderr.txt");
        ProcessBuilder first = new ProcessBuilder("bash", copy.resolve("stagger").toString(), "--version")
                .redirectError(err.toFile());
        // Maven's log lines with the time in front (as .ci/run has them): the progress lines must not change
        first.environment().merge("MAVEN_OPTS", TIMESTAMPED_LOG, (own, added) -> own + " " + added);
        Process launcher = first.start();
        stdout = new String(launcher.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(launcher.waitFor(10, TimeUnit.MINUTES)).as("the first build ends").isTrue();
        exit = launcher.exitValue();
        stderr = Files.readString(err);
    }

    @Test
    void buildsThenRunsTheCommand() {
        assertThat(exit).as(stderr).isZero();
        assertThat(stdout).contains("stagger 0.1.0");
    }

    @Test
    void showsEachModuleAsItIsBuilt() {
        assertThat(stderr.lines().filter(l -> l.matches("stagger: +\\[\\d+/\\d+\\] stagger-[a-z]+")))
                .as(stderr).hasSizeGreaterThanOrEqualTo(8)
                .anyMatch(l -> l.endsWith("stagger-core")).anyMatch(l -> l.endsWith("stagger-cli"));
        assertThat(stderr).containsPattern("stagger: built in \\d+ s");
    }

    @Test
    void writesNoEscapeCodesWhenStderrIsNotATerminal() {
        assertThat(stderr).isNotEmpty().doesNotContain("\u001b");
        assertThat(stdout).doesNotContain("\u001b");
    }

    @Test
    void buildsOnlyTheMainCodeOfTheModulesTheCommandUses() throws IOException {
        assertThat(copy.resolve("stagger-cli/target/stagger.jar")).exists();
        assertThat(copy.resolve("stagger-benchmarks/target")).doesNotExist();
        try (Stream<Path> dirs = Files.walk(copy, 3)) {
            assertThat(dirs.filter(d -> d.endsWith("test-classes")).toList()).as("compiled tests").isEmpty();
        }
    }

    @Test
    void aSecondRunDoesNotBuildAgain() throws Exception {
        Process again = new ProcessBuilder("bash", copy.resolve("stagger").toString(), "--version").start();
        String err = new String(again.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(again.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(again.exitValue()).isZero();
        assertThat(err).doesNotContain("building");
    }

    /** The sources as a fresh clone has them: no build output, no local databases. */
    private static void copySources(Path from, Path to) throws IOException {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                Path rel = from.relativize(p);
                if (rel.toString().isEmpty()) {
                    continue;
                }
                if (skipped(rel)) {
                    continue;
                }
                Path target = to.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
        Files.setPosixFilePermissions(to.resolve("stagger"), java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static boolean skipped(Path rel) {
        for (Path part : rel) {
            String name = part.toString();
            if (name.equals("target") || name.startsWith(".git") || name.equals("node_modules")) {
                return true;
            }
        }
        return false;
    }

    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        return path != null && List.of(path.split(java.io.File.pathSeparator)).stream()
                .anyMatch(d -> Files.isExecutable(Path.of(d, program)));
    }
}
