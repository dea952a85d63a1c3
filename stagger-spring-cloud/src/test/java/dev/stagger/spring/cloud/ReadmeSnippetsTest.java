package dev.stagger.spring.cloud;

import dev.stagger.testsupport.readme.ReadmeSnippets;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The README {@code ```java} blocks marked {@code compiled-by: stagger-spring-cloud} compile on
 * this module's class path, with Spring Boot's and Spring Cloud's versions.
 */
class ReadmeSnippetsTest {
    private static final String MODULE = "stagger-spring-cloud";

    @TestFactory
    Stream<DynamicTest> everyJavaBlockThatNamesThisModuleCompiles() throws Exception {
        return ReadmeSnippets.compiledBy(MODULE);
    }
}
