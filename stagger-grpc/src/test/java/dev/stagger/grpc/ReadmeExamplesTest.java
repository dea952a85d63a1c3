package dev.stagger.grpc;

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

/** The module README's snippet compiles as written. */
class ReadmeExamplesTest {
    private static final String IMPORTS = String.join("\n",
            "import dev.stagger.*;", "import dev.stagger.grpc.*;", "import io.grpc.ManagedChannel;",
            "import io.grpc.ManagedChannelBuilder;", "import java.util.Map;", "");

    @TempDir
    Path dir;

    @Test
    void theModuleReadmeExampleCompiles() throws IOException {
        String body = snippet(Files.readString(moduleDir().resolve("README.md")), "grpc-example");
        String source = IMPORTS + "class Example {\n"
                + "    static ManagedChannel example(ManagedChannelBuilder<?> channelBuilder, Map<String, ?> serviceConfig) {\n"
                + body + "        return channel;\n    }\n}\n";
        Path file = dir.resolve("Example.java");
        Files.writeString(file, source);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertThat(compiler).as("a JDK (not a JRE) runs the tests").isNotNull();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            List<String> options = List.of("-classpath", System.getProperty("java.class.path"), "-d", dir.toString(),
                    "-Xlint:all", "-Werror");
            boolean ok = compiler.getTask(null, files, diagnostics, options, null, files.getJavaFileObjects(file)).call();
            assertThat(ok).as("README.md compiles: %s", diagnostics.getDiagnostics()).isTrue();
        }
    }

    /** The Java code inside the ```java fence between {@code <!-- marker:begin -->} and {@code <!-- marker:end -->}. */
    private static String snippet(String readme, String marker) {
        int begin = readme.indexOf("<!-- " + marker + ":begin -->");
        int end = readme.indexOf("<!-- " + marker + ":end -->");
        assertThat(begin).as("begin marker of %s", marker).isNotNegative();
        assertThat(end).as("end marker of %s", marker).isGreaterThan(begin);
        List<String> block = readme.substring(readme.indexOf('\n', begin) + 1, end).strip().lines().toList();
        assertThat(block.get(0)).isEqualTo("```java");
        assertThat(block.get(block.size() - 1)).isEqualTo("```");
        return String.join("\n", block.subList(1, block.size() - 1)) + "\n";
    }

    private static Path moduleDir() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("stagger-grpc/README.md"))) {
                return d.resolve("stagger-grpc");
            }
            if (Files.isRegularFile(d.resolve("README.md")) && d.endsWith("stagger-grpc")) {
                return d;
            }
        }
        throw new IllegalStateException("stagger-grpc/README.md not found above " + Path.of("").toAbsolutePath());
    }
}
