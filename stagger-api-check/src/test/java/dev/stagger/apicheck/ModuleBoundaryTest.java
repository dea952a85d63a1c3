package dev.stagger.apicheck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user's module that {@code requires dev.stagger.jdbc} (and so, transitively, dev.stagger.core)
 * compiles against the API, and does not compile against an internal class: the module
 * descriptors keep the internal packages out of reach, including {@code dev.stagger.internal},
 * which core exports only to the Stagger modules that use it. The Stagger modules are the built
 * {@code target/classes} directories, on the module path.
 */
class ModuleBoundaryTest {

    @TempDir
    Path work;

    @Test
    void aUserModuleCompilesAgainstTheApi() throws IOException {
        List<Diagnostic<? extends JavaFileObject>> errors = compileUserModule("""
                package com.example.app;

                import dev.stagger.Retry;
                import dev.stagger.RetryPolicy;
                import dev.stagger.jdbc.StoreException;

                public class App {
                    public static String run() throws Exception {
                        return Retry.of("app", RetryPolicy.interactive()).call(() -> "ok");
                    }

                    public static Class<?> storeFailure() {
                        return StoreException.class;
                    }
                }
                """);
        assertThat(errors).isEmpty();
    }

    @Test
    void aUserModuleCannotCompileAgainstCoresInternalPackage() throws IOException {
        List<Diagnostic<? extends JavaFileObject>> errors = compileUserModule("""
                package com.example.app;

                public class App {
                    public static Object check(Object value) {
                        return dev.stagger.internal.Checks.notNull("value", value);
                    }
                }
                """);
        assertThat(messages(errors)).contains("package dev.stagger.internal is not visible")
                .contains("declared in module dev.stagger.core");
    }

    @Test
    void aUserModuleCannotCompileAgainstJdbcsInternalPackage() throws IOException {
        List<Diagnostic<? extends JavaFileObject>> errors = compileUserModule("""
                package com.example.app;

                public class App {
                    public static Class<?> helper() {
                        return dev.stagger.jdbc.internal.Echo.class;
                    }
                }
                """);
        assertThat(messages(errors)).contains("package dev.stagger.jdbc.internal is not visible")
                .contains("declared in module dev.stagger.jdbc");
    }

    private List<Diagnostic<? extends JavaFileObject>> compileUserModule(String app) throws IOException {
        Path src = work.resolve("src");
        Files.createDirectories(src.resolve("com/example/app"));
        Files.writeString(src.resolve("module-info.java"),
                "module com.example.app { requires dev.stagger.jdbc; }\n", StandardCharsets.UTF_8);
        Files.writeString(src.resolve("com/example/app/App.java"), app, StandardCharsets.UTF_8);
        Path root = ApiDumpTest.projectRoot();
        String modulePath = root.resolve("stagger-core/target/classes") + File.pathSeparator
                + root.resolve("stagger-jdbc/target/classes");
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            // an empty class path: javac would otherwise read this JVM's, where the Stagger classes sit unnamed
            Files.createDirectories(work.resolve("empty"));
            List<String> options = List.of("--module-path", modulePath, "-classpath", work.resolve("empty").toString(),
                    "-d", work.resolve("out").toString());
            compiler.getTask(null, files, diagnostics, options, null,
                    files.getJavaFileObjects(src.resolve("module-info.java"), src.resolve("com/example/app/App.java")))
                    .call();
        }
        return diagnostics.getDiagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR).toList();
    }

    private static String messages(List<Diagnostic<? extends JavaFileObject>> errors) {
        return errors.stream().map(d -> d.getMessage(null)).collect(Collectors.joining("\n"));
    }
}
