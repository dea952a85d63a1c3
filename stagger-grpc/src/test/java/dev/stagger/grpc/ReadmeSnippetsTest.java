package dev.stagger.grpc;

import dev.stagger.testsupport.readme.ReadmeSnippets;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** The README {@code ```java} blocks marked {@code compiled-by: stagger-grpc} compile on this module's class path. */
class ReadmeSnippetsTest {
    private static final String MODULE = "stagger-grpc";

    @TestFactory
    Stream<DynamicTest> everyJavaBlockThatNamesThisModuleCompiles() throws Exception {
        return ReadmeSnippets.compiledBy(MODULE);
    }
}
