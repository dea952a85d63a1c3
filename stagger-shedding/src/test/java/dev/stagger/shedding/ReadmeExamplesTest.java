package dev.stagger.shedding;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shedding snippets of the module README and the root README compile as written. */
class ReadmeExamplesTest {
    private static final String IMPORTS = String.join("\n", "import dev.stagger.shedding.*;",
            "import jakarta.servlet.DispatcherType;", "import jakarta.servlet.ServletContext;", "import java.util.EnumSet;", "");

    @TempDir
    Path dir;

    @Test
    void theModuleReadmeExampleCompiles() throws IOException {
        compile("stagger-shedding/README.md", "shedding-example");
    }

    @Test
    void theRootReadmeExampleCompiles() throws IOException {
        compile("README.md", "shedding-quickstart");
    }

    private void compile(String readme, String marker) throws IOException {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.isRegularFile(root.resolve("stagger-shedding/README.md"))) {
            root = root.getParent();
            assertThat(root).as("the repository root").isNotNull();
        }
        String text = Files.readString(root.resolve(readme));
        int begin = text.indexOf("<!-- " + marker + ":begin -->");
        int end = text.indexOf("<!-- " + marker + ":end -->");
        assertThat(begin).as("begin marker").isNotNegative();
        assertThat(end).as("end marker").isGreaterThan(begin);
        List<String> block = text.substring(text.indexOf('\n', begin) + 1, end).strip().lines().toList();
        assertThat(block.get(0)).isEqualTo("```java");
        assertThat(block.get(block.size() - 1)).isEqualTo("```");
        String source = IMPORTS + "class Example {\n    static void example(ServletContext servletContext) {\n"
                + String.join("\n", block.subList(1, block.size() - 1)) + "\n    }\n}\n";
        Path file = dir.resolve("Example.java");
        Files.writeString(file, source);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            List<String> options = List.of("-classpath", System.getProperty("java.class.path"), "-d", dir.toString(),
                    "-Xlint:all", "-Werror");
            boolean ok = compiler.getTask(null, files, diagnostics, options, null, files.getJavaFileObjects(file)).call();
            assertThat(ok).as("%s (%s) compiles: %s", readme, marker, diagnostics.getDiagnostics()).isTrue();
        }
    }
}
