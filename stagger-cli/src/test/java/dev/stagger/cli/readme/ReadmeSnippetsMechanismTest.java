package dev.stagger.cli.readme;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.readme.ReadmeSnippets;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The snippet mechanism itself: it finds blocks others add, reads markers, and fails where it must. */
class ReadmeSnippetsMechanismTest {
    @TempDir
    Path root;

    private List<ReadmeSnippets.Result> compile(String markdown) throws Exception {
        Path file = Files.writeString(root.resolve("README.md"), markdown);
        return ReadmeSnippets.compile(ReadmeSnippets.snippets(file, "README.md"), System.getProperty("java.class.path"));
    }

    @Test
    void findsReadmesInEveryModuleAndDocsButNotInBuildOutput() throws Exception {
        Files.createDirectories(root.resolve("stagger-new/target"));
        Files.createDirectories(root.resolve("docs/guides"));
        Files.writeString(root.resolve("README.md"), "x");
        Files.writeString(root.resolve("stagger-new/README.md"), "x");
        Files.writeString(root.resolve("stagger-new/target/README.md"), "x");
        Files.writeString(root.resolve("docs/guides/tuning.md"), "x");
        Files.writeString(root.resolve("stagger-new/NOTES.md"), "x");
        assertThat(ReadmeSnippets.markdownFiles(root)).extracting(p -> root.relativize(p).toString().replace('\\', '/'))
                .containsExactly("README.md", "docs/guides/tuning.md", "stagger-new/README.md");
    }

    @Test
    void statementsUsingTheProjectAndTheJdkCompileWithoutImports() throws Exception {
        List<ReadmeSnippets.Result> r = compile("""
                # Title

                ```java
                RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).deadline(Duration.ofSeconds(5)).build();
                Clock clock = Clock.system();  // Stagger's Clock, not java.time's
                List<String> names = new ArrayList<>();
                ```
                """);
        assertThat(r).singleElement().satisfies(x -> assertThat(x.compiled()).withFailMessage(x::report).isTrue());
    }

    @Test
    void aBrokenSnippetFailsNamingTheFileAndTheLineOfTheError() throws Exception {
        List<ReadmeSnippets.Result> r = compile("""
                # Title

                Some text.

                ```java
                RetryPolicy policy = RetryPolicy.builder()
                        .maxAttempts(3)
                        .retryEverythingForever()
                        .build();
                ```
                """);
        assertThat(r).singleElement().satisfies(x -> {
            assertThat(x.compiled()).isFalse();
            assertThat(x.snippet().place()).isEqualTo("README.md:5");
            assertThat(x.report()).startsWith("README.md:5: the ```java block does not compile")
                    .contains("README.md:8: cannot find symbol", "retryEverythingForever");
        });
    }

    @Test
    void anUndeclaredVariableFailsUntilAMarkerDeclaresIt() throws Exception {
        String block = """
                ```java
                Retry retry = Retry.of("inventory", policy);
                String stock = retry.call(() -> inventory.fetch(sku));
                ```
                """;
        assertThat(compile(block)).singleElement().satisfies(x -> assertThat(x.report()).contains("policy", "inventory"));
        List<ReadmeSnippets.Result> declared = compile("""
                <!-- snippet: an inventory service
                RetryPolicy policy; String sku;
                interface Inventory { String fetch(String sku) throws Exception; }
                Inventory inventory;
                -->

                """ + block);
        assertThat(declared).singleElement().satisfies(x -> assertThat(x.compiled()).withFailMessage(x::report).isTrue());
    }

    @Test
    void aMarkerCanImportAndWrapAContinuation() throws Exception {
        List<ReadmeSnippets.Result> r = compile("""
                <!-- snippet
                import java.util.stream.Collectors;
                prefix: String joined = List.of("a", "b").stream()
                suffix: ;
                -->
                ```java
                        .collect(Collectors.joining(","))
                ```
                """);
        assertThat(r).singleElement().satisfies(x -> assertThat(x.compiled()).withFailMessage(x::report).isTrue());
    }

    @Test
    void aMarkerMayStandBeforeAnotherTestsBeginComment() throws Exception {
        List<ReadmeSnippets.Result> r = compile("""
                <!-- snippet
                RetryPolicy policy;
                -->
                <!-- example:begin -->

                ```java
                Retry retry = Retry.of("inventory", policy);
                ```
                <!-- example:end -->
                """);
        assertThat(r).singleElement().satisfies(x -> assertThat(x.compiled()).withFailMessage(x::report).isTrue());
    }

    @Test
    void aMarkerCanNameTheModuleThatCompilesTheSnippet() throws Exception {
        Path file = Files.writeString(root.resolve("README.md"), """
                <!-- snippet
                compiled-by: stagger-spring-boot-autoconfigure
                import org.springframework.web.client.RestClient;
                -->
                ```java
                RestClient client = RestClient.create();
                ```

                ```java
                int attempts = RetryPolicy.interactive().maxAttempts();
                ```
                """);
        List<ReadmeSnippets.Snippet> all = ReadmeSnippets.snippets(file, "README.md");
        assertThat(ReadmeSnippets.compiledBy(all, "stagger-spring-boot-autoconfigure")).singleElement()
                .satisfies(s -> assertThat(s.context().imports()).containsExactly("import org.springframework.web.client.RestClient;"))
                .extracting(ReadmeSnippets.Snippet::fenceLine).isEqualTo(5);
        assertThat(ReadmeSnippets.compiledBy(all, ReadmeSnippets.THIS_MODULE)).singleElement()
                .extracting(ReadmeSnippets.Snippet::fenceLine).isEqualTo(9);
    }

    @Test
    void aClassPathWithoutJettyOrMicrometerStillCompilesSnippetsThatDoNotUseThem() throws Exception {
        String withoutThem = Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.contains("jetty") && !e.contains("micrometer") && !e.contains("servlet"))
                .collect(Collectors.joining(File.pathSeparator));
        Path file = Files.writeString(root.resolve("README.md"), """
                ```java
                RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).deadline(Duration.ofSeconds(5)).build();
                ```
                """);
        List<ReadmeSnippets.Result> r = ReadmeSnippets.compile(ReadmeSnippets.snippets(file, "README.md"), withoutThem);
        assertThat(r).singleElement().satisfies(x -> assertThat(x.compiled()).withFailMessage(x::report).isTrue());
    }

    @Test
    void membersAndWholeFilesCompileToo() throws Exception {
        List<ReadmeSnippets.Result> r = compile("""
                ```java
                @Override
                public String toString() {
                    return RetryPolicy.interactive().toString();
                }
                ```

                ```java
                import dev.stagger.RetryPolicy;

                public class Example {
                    public static void main(String[] args) {
                        System.out.println(RetryPolicy.background());
                    }
                }
                ```
                """);
        assertThat(r).hasSize(2).allSatisfy(x -> assertThat(x.compiled()).withFailMessage(x::report).isTrue());
        assertThat(r).extracting(ReadmeSnippets.Result::form).containsExactly("as class members", "as a whole file");
    }

    @Test
    void oneSnippetThatDoesNotParseDoesNotHideAnothersTypeErrors() throws Exception {
        List<ReadmeSnippets.Result> r = compile("""
                ```java
                this is not java at all (
                ```

                ```java
                int attempts = RetryPolicy.interactive().noSuchSetting();
                ```

                ```java
                int attempts = RetryPolicy.interactive().maxAttempts();
                ```
                """);
        assertThat(r).extracting(ReadmeSnippets.Result::compiled).containsExactly(false, false, true);
        assertThat(r.get(1).report()).contains("noSuchSetting");
    }
}
