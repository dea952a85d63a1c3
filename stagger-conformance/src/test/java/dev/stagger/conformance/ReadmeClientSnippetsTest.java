package dev.stagger.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.readme.ReadmeSnippets;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The README {@code ```java} blocks of the client modules (OkHttp, Apache HttpClient 5, OpenFeign:
 * {@code compiled-by: stagger-conformance} in their marker) compile on this module's class path,
 * where every client library is.
 */
class ReadmeClientSnippetsTest {
    private static final String MODULE = "stagger-conformance";

    @TestFactory
    Stream<DynamicTest> everyJavaBlockThatNamesThisModuleCompiles() throws Exception {
        Path root = ReadmeSnippets.repositoryRoot();
        List<ReadmeSnippets.Snippet> ours = ReadmeSnippets.compiledBy(ReadmeSnippets.allSnippets(root), MODULE);
        assertThat(ours).as("README blocks marked 'compiled-by: %s'", MODULE).hasSizeGreaterThanOrEqualTo(4);
        return ReadmeSnippets.compile(ours, System.getProperty("java.class.path")).stream()
                .map(r -> DynamicTest.dynamicTest(r.snippet().place(), () ->
                        assertThat(r.compiled()).withFailMessage(r::report).isTrue()));
    }
}
