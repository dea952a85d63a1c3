package dev.stagger.cli.readme;

import static org.assertj.core.api.Assertions.assertThat;

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
 * every module, so its test class path holds them all.
 */
class ReadmeSnippetsTest {
    static Path root;
    static List<ReadmeSnippets.Snippet> snippets;
    static List<ReadmeSnippets.Result> results;

    @BeforeAll
    static void compileEverySnippet() throws Exception {
        root = ReadmeSnippets.repositoryRoot();
        snippets = new ArrayList<>();
        for (Path md : ReadmeSnippets.markdownFiles(root)) {
            snippets.addAll(ReadmeSnippets.snippets(md, root.relativize(md).toString()));
        }
        results = ReadmeSnippets.compile(snippets, System.getProperty("java.class.path"));
    }

    @TestFactory
    Stream<DynamicTest> everyJavaBlockCompiles() {
        return results.stream().map(r -> DynamicTest.dynamicTest(r.snippet().place(), () ->
                assertThat(r.compiled()).withFailMessage(r::report).isTrue()));
    }

    @Test
    void findsTheBlocksOfTheRootAndModuleReadmes() {
        assertThat(snippets).extracting(ReadmeSnippets.Snippet::shownPath)
                .contains("README.md", "stagger-core/README.md", "stagger-http/README.md", "stagger-jobs/README.md",
                        "stagger-idempotency/README.md", "stagger-jdbc/README.md", "stagger-observability/README.md");
    }
}
