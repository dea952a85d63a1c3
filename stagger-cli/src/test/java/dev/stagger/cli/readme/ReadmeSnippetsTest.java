package dev.stagger.cli.readme;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.readme.ReadmeSnippets;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every {@code ```java} block of every README (and of {@code docs/}) compiles against the
 * project's classes: one test per block, named after its file and line. stagger-cli depends on
 * every module but the Spring Boot starter, so its test class path holds them; a block whose
 * marker names another module ({@code compiled-by:}) is compiled by that module's tests, and here
 * it is checked that the module exists and runs {@link ReadmeSnippets#compiledBy} on its class path.
 */
class ReadmeSnippetsTest {
    static Path root;
    static List<ReadmeSnippets.Snippet> snippets;
    static List<ReadmeSnippets.Result> results;

    @BeforeAll
    static void compileEverySnippet() throws Exception {
        root = ReadmeSnippets.repositoryRoot();
        snippets = ReadmeSnippets.allSnippets(root);
        results = ReadmeSnippets.compile(ReadmeSnippets.compiledBy(snippets, ReadmeSnippets.THIS_MODULE),
                System.getProperty("java.class.path"));
    }

    @TestFactory
    Stream<DynamicTest> everyJavaBlockCompiles() {
        return results.stream().map(r -> DynamicTest.dynamicTest(r.snippet().place(), () ->
                assertThat(r.compiled()).withFailMessage(r::report).isTrue()));
    }

    @TestFactory
    Stream<DynamicTest> everyBlockCompiledElsewhereNamesAModuleThatCompilesIt() {
        List<ReadmeSnippets.Snippet> elsewhere = new ArrayList<>(snippets);
        elsewhere.removeIf(s -> s.context().compiledBy().equals(ReadmeSnippets.THIS_MODULE));
        return elsewhere.stream().map(s -> DynamicTest.dynamicTest(
                s.place() + " (compiled by " + s.context().compiledBy() + ")",
                () -> assertCompilesReadmeSnippets(s.context().compiledBy(), s.place())));
    }

    /** {@code module} is a module of the build whose tests use stagger-cli's test jar to compile README snippets. */
    private static void assertCompilesReadmeSnippets(String module, String place) throws IOException {
        assertThat(Files.readString(root.resolve("pom.xml")))
                .as("%s: 'compiled-by: %s' names a module of the build", place, module)
                .contains("<module>" + module + "</module>");
        assertThat(Files.readString(root.resolve(module).resolve("pom.xml")))
                .as("%s: %s has stagger-test-support on its test class path", place, module)
                .contains("<artifactId>stagger-test-support</artifactId>");
        Path tests = root.resolve(module).resolve("src/test/java");
        try (Stream<Path> files = Files.walk(tests)) {
            assertThat(files.filter(f -> f.toString().endsWith(".java")).filter(f -> read(f).contains(
                            "ReadmeSnippets.compiledBy(")).toList())
                    .as("%s: a test of %s compiles the snippets that name it", place, module).isNotEmpty();
        }
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void findsTheBlocksOfTheRootAndModuleReadmes() {
        assertThat(snippets).extracting(ReadmeSnippets.Snippet::shownPath)
                .contains("README.md", "stagger-core/README.md", "stagger-http/README.md", "stagger-jobs/README.md",
                        "stagger-idempotency/README.md", "stagger-jdbc/README.md", "stagger-observability/README.md",
                        "stagger-inbox/README.md", "stagger-rabbitmq/README.md");
    }
}
