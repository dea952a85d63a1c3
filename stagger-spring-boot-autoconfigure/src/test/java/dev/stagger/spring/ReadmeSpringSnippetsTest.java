package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.cli.readme.ReadmeSnippets;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The README {@code ```java} blocks that use the starter ({@code compiled-by:
 * stagger-spring-boot-autoconfigure} in their marker) compile on this module's class path, with
 * Spring Boot's versions: stagger-cli's {@code ReadmeSnippetsTest} compiles every other block.
 */
class ReadmeSpringSnippetsTest {
    private static final String MODULE = "stagger-spring-boot-autoconfigure";

    @TestFactory
    Stream<DynamicTest> everyJavaBlockThatNamesThisModuleCompiles() throws Exception {
        Path root = ReadmeSnippets.repositoryRoot();
        List<ReadmeSnippets.Snippet> ours = ReadmeSnippets.compiledBy(ReadmeSnippets.allSnippets(root), MODULE);
        assertThat(ours).as("README blocks marked 'compiled-by: %s'", MODULE).isNotEmpty();
        return ReadmeSnippets.compile(ours, System.getProperty("java.class.path")).stream()
                .map(r -> DynamicTest.dynamicTest(r.snippet().place(), () ->
                        assertThat(r.compiled()).withFailMessage(r::report).isTrue()));
    }
}
