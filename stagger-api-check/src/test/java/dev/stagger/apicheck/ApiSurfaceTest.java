package dev.stagger.apicheck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the class-file reader counts and dumps, on classes compiled for the test. */
class ApiSurfaceTest {

    @TempDir
    Path work;

    private ApiSurface compile(Map<String, String> sources) throws IOException {
        List<Path> files = new ArrayList<>();
        for (Map.Entry<String, String> e : sources.entrySet()) {
            Path file = work.resolve("src").resolve(e.getKey());
            Files.createDirectories(file.getParent());
            Files.writeString(file, e.getValue(), StandardCharsets.UTF_8);
            files.add(file);
        }
        Path out = work.resolve("classes");
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        try (StandardJavaFileManager fm = compiler.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            assertThat(compiler.getTask(null, fm, null, List.of("-d", out.toString()), null,
                    fm.getJavaFileObjectsFromPaths(files)).call()).isTrue();
        }
        return ApiSurface.read("sample", out);
    }

    @Test
    void dumpsPublicAndProtectedMembersInJavaNotationAndLeavesOutTheRest() throws IOException {
        ApiSurface surface = compile(Map.of("p/Api.java", """
                package p;
                public class Api<T extends Comparable<T>> {
                    public static final int LIMIT = 3;
                    public Api() {}
                    public java.util.List<? extends T> items(String... names) { return null; }
                    protected void hook() {}
                    void packagePrivate() {}
                    private void hidden() {}
                    public static final class Builder {}
                    static final class Hidden {}
                }
                """));
        assertThat(surface.dump()).isEqualTo("""
                public class p.Api<T extends java.lang.Comparable<T>> {
                  protected void hook()
                  public Api()
                  public java.util.List<? extends T> items(java.lang.String...)
                  public static final int LIMIT
                }

                public static final class p.Api.Builder {
                  public Builder()
                }

                """);
        assertThat(surface.apiTypes()).isEqualTo(2);
    }

    @Test
    void countsInternalTypesApartAndFindsApiSignaturesThatNameThem() throws IOException {
        ApiSurface surface = compile(Map.of(
                "p/internal/Helper.java", "package p.internal; public class Helper {}",
                "p/Leaky.java", "package p; public class Leaky extends p.internal.Helper {"
                        + " public p.internal.Helper helper() { return null; } }"));
        assertThat(surface.apiTypes()).isEqualTo(1);
        assertThat(surface.internalTypes()).isEqualTo(1);
        assertThat(surface.internalLeaks()).containsExactly(
                "p.Leaky mentions p.internal.Helper",
                "p.Leaky.helper(..) mentions p.internal.Helper");
    }

    @Test
    void theDiffShowsRemovedAndAddedLinesUnderTheirType() {
        String before = "public class p.A {\n  public void a()\n}\n";
        String after = "public class p.A {\n  public void b()\n}\n";
        assertThat(LineDiff.diff(before, after)).isEqualTo("  public class p.A {\n+   public void b()\n-   public void a()\n");
    }
}
