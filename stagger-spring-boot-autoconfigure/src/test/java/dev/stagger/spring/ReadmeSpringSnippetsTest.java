package dev.stagger.spring;

import dev.stagger.testsupport.readme.ReadmeSnippets;
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
        return ReadmeSnippets.compiledBy(MODULE);
    }
}
