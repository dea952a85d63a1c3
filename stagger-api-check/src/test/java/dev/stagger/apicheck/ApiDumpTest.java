package dev.stagger.apicheck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every published module's public API equals its checked-in dump ({@code <module>/api/<module>.api}),
 * so an API change shows up in review as a change of that file. Run with
 * {@code -Dstagger.api.update=true} to rewrite the dumps from the compiled classes (see
 * CONTRIBUTING.md for the one command).
 */
class ApiDumpTest {

    static final String REGENERATE = "mvn -B -pl stagger-api-check -am verify -Dtest=ApiDumpTest"
            + " -Dsurefire.failIfNoSpecifiedTests=false -Dstagger.api.update=true";

    static Path projectRoot() {
        return Path.of("").toAbsolutePath().getParent();
    }

    @Test
    void everyModulesApiMatchesItsCheckedInDump() throws IOException {
        boolean update = Boolean.getBoolean("stagger.api.update");
        List<String> differences = new ArrayList<>();
        for (Map.Entry<String, Path> module : ApiSurface.modules(projectRoot()).entrySet()) {
            ApiSurface surface = ApiSurface.read(module.getKey(), module.getValue().resolve("target/classes"));
            Path file = ApiSurface.dumpFile(module.getValue());
            String actual = surface.dump();
            String expected = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
            if (actual.equals(expected)) {
                continue;
            }
            if (update) {
                Files.createDirectories(file.getParent());
                Files.writeString(file, actual, StandardCharsets.UTF_8);
            } else {
                differences.add(projectRoot().relativize(file) + " (- dump, + compiled classes):\n"
                        + LineDiff.diff(expected, actual));
            }
        }
        assertThat(differences)
                .as("The public API differs from the checked-in dump. If the change is intended,"
                        + " regenerate the dumps and commit them:\n  " + REGENERATE + "\n")
                .isEmpty();
    }

    @Test
    void noApiDeclarationMentionsAnInternalType() {
        List<String> leaks = new ArrayList<>();
        for (Map.Entry<String, Path> module : ApiSurface.modules(projectRoot()).entrySet()) {
            leaks.addAll(ApiSurface.read(module.getKey(), module.getValue().resolve("target/classes")).internalLeaks());
        }
        assertThat(leaks).isEmpty();
    }
}
