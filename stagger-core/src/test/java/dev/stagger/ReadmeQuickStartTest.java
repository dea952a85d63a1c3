package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
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

/** The quick start in the repository's README compiles as written and does what it says. */
class ReadmeQuickStartTest {
    private static final String BEGIN = "<!-- quickstart:begin -->";
    private static final String END = "<!-- quickstart:end -->";

    @Test
    void theReadmeQuickStartCompilesRunsAndRecoversAfterThreeAttempts(@TempDir Path dir) throws Exception {
        String source = quickStartSource(rootReadme());
        assertThat(source.lines().count()).as("the quick start is at most 15 lines").isLessThanOrEqualTo(15);
        Path file = dir.resolve("QuickStart.java");
        Files.writeString(file, source);

        compile(file, dir);
        String output = runMain(dir, "QuickStart");

        assertThat(output.strip()).isEqualTo("42 in stock after 3 attempts");
    }

    /** The README.md at the repository root: the nearest one above the module holding the marker. */
    private static String rootReadme() throws IOException {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path readme = d.resolve("README.md");
            if (Files.isRegularFile(readme)) {
                String text = Files.readString(readme);
                if (text.contains(BEGIN)) {
                    return text;
                }
            }
        }
        throw new AssertionError("no README.md with " + BEGIN + " above " + Path.of("").toAbsolutePath());
    }

    /** The Java code inside the ```java fence between the two marker lines. */
    static String quickStartSource(String readme) {
        int begin = readme.indexOf(BEGIN);
        int end = readme.indexOf(END);
        assertThat(begin).as("begin marker").isNotNegative();
        assertThat(end).as("end marker after the begin marker").isGreaterThan(begin);
        List<String> block = readme.substring(begin + BEGIN.length(), end).strip().lines().toList();
        assertThat(block.get(0)).isEqualTo("```java");
        assertThat(block.get(block.size() - 1)).isEqualTo("```");
        return String.join("\n", block.subList(1, block.size() - 1)) + "\n";
    }

    private static void compile(Path source, Path out) throws IOException {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertThat(compiler).as("a JDK (not a JRE) runs the tests").isNotNull();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            List<String> options = List.of("-classpath", classPath(), "-d", out.toString(),
                    "-Xlint:all", "-Werror");
            boolean ok = compiler.getTask(null, files, diagnostics, options, null, files.getJavaFileObjects(source)).call();
            assertThat(ok).as("compiles without errors or warnings: %s", diagnostics.getDiagnostics()).isTrue();
        }
    }

    /** The tests' class path, and the module path when they run inside the module. */
    private static String classPath() {
        String modulePath = System.getProperty("jdk.module.path", "");
        String classPath = System.getProperty("java.class.path", "");
        return modulePath.isEmpty() ? classPath : modulePath + java.io.File.pathSeparator + classPath;
    }

    private static String runMain(Path classes, String className) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                ReadmeQuickStartTest.class.getClassLoader())) {
            Method main = loader.loadClass(className).getMethod("main", String[].class);
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) new String[0]);
        } finally {
            System.setOut(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
