package dev.stagger.rabbitmq;

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

/** The queue-consumer and inbox snippets of the READMEs compile as written. */
class ReadmeExamplesTest {
    private static final String IMPORTS = String.join("\n",
            "import com.rabbitmq.client.ConnectionFactory;", "import dev.stagger.*;", "import dev.stagger.rabbitmq.*;",
            "import dev.stagger.inbox.Inbox;", "import dev.stagger.jdbc.Transactions;", "import java.sql.Connection;",
            "import java.time.Duration;", "import javax.sql.DataSource;", "");

    @TempDir
    Path dir;

    @Test
    void theModuleReadmeConsumerExampleCompiles() throws IOException {
        compile("stagger-rabbitmq/README.md", "rabbitmq-example",
                "ConnectionFactory connectionFactory, DataSource dataSource");
    }

    @Test
    void theInboxReadmeExampleCompiles() throws IOException {
        compile("stagger-inbox/README.md", "inbox-example", "DataSource dataSource, String eventId, byte[] payload");
    }

    @Test
    void theRootReadmeQueueConsumerExampleCompiles() throws IOException {
        compile("README.md", "queue-consumers", "ConnectionFactory connectionFactory, DataSource dataSource");
    }

    private void compile(String readme, String marker, String parameters) throws IOException {
        String body = snippet(Files.readString(repositoryRoot().resolve(readme)), marker);
        String source = IMPORTS + "class Example {\n"
                + "    static void example(" + parameters + ") throws Exception {\n" + body + "    }\n"
                + "    static void charge(Connection c, byte[] body) {}\n"
                + "    static void applyPayment(Connection c, byte[] body) {}\n"
                + "}\n";
        Path file = dir.resolve("Example.java");
        Files.writeString(file, source);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertThat(compiler).as("a JDK (not a JRE) runs the tests").isNotNull();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            List<String> options = List.of("-classpath", System.getProperty("java.class.path"), "-d", dir.toString(),
                    "-Xlint:all", "-Werror");
            boolean ok = compiler.getTask(null, files, diagnostics, options, null, files.getJavaFileObjects(file)).call();
            assertThat(ok).as("%s (%s) compiles: %s", readme, marker, diagnostics.getDiagnostics()).isTrue();
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

    private static Path repositoryRoot() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("stagger-rabbitmq/README.md"))) {
                return d;
            }
        }
        throw new AssertionError("no repository root above " + Path.of("").toAbsolutePath());
    }
}
