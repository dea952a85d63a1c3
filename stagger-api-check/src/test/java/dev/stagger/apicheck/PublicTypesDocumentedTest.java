package dev.stagger.apicheck;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ModifiersTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.DocTrees;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePath;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.lang.model.element.Modifier;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every public or protected type of a published module, outside its {@code internal} packages, and
 * every API package, has a Javadoc comment. This is doclint's "missing" check for types and
 * packages: the Javadoc build runs every other doclint check, but not "missing", which would also ask
 * for a {@code @param} and {@code @return} tag on every member (see CONTRIBUTING.md).
 */
class PublicTypesDocumentedTest {

    private static final Path ROOT = ApiDumpTest.projectRoot();

    @TempDir
    Path work;

    @Test
    void everyPublicTypeAndApiPackageOfThePublishedModulesHasAJavadocComment() throws Exception {
        List<String> undocumented = new ArrayList<>();
        int files = 0;
        for (String module : BomTest.publishedModules()) {
            List<Path> sources = apiSources(ROOT.resolve(module).resolve("src/main/java"));
            files += sources.size();
            undocumented.addAll(undocumented(sources));
        }
        assertThat(files).as("API source files read").isGreaterThan(100);
        assertThat(undocumented).as("public types and API packages without a Javadoc comment").isEmpty();
    }

    @Test
    void reportsAnUndocumentedPublicTypeAndPackageAndNothingElse() throws IOException {
        Path dir = Files.createDirectories(work.resolve("src/com/example"));
        Files.writeString(dir.resolve("package-info.java"), "package com.example;\n");
        Files.writeString(dir.resolve("Shown.java"), """
                package com.example;

                /** Documented. */
                public class Shown {
                    public static class Bare {}
                    /** Documented. */
                    public interface Api {
                        class ImplicitlyPublic {}
                    }
                    private static class Hidden {}
                    static class PackagePrivate {}
                }
                """);
        Files.writeString(dir.resolve("Plain.java"), """
                package com.example;

                public record Plain(int value) {}
                """);

        List<String> names = undocumented(apiSources(work.resolve("src"))).stream()
                .map(line -> line.substring(line.lastIndexOf(' ') + 1))
                .toList();

        assertThat(names).containsExactlyInAnyOrder("com.example", "Bare", "ImplicitlyPublic", "Plain");
    }

    /** The source files of {@code sourceRoot} outside {@code internal} packages, package-info included. */
    private static List<Path> apiSources(Path sourceRoot) throws IOException {
        if (!Files.isDirectory(sourceRoot)) {
            return List.of();
        }
        try (Stream<Path> walk = Files.walk(sourceRoot)) {
            return walk.filter(file -> file.getFileName().toString().endsWith(".java"))
                    .filter(file -> !file.getFileName().toString().equals("module-info.java"))
                    .filter(file -> {
                        for (Path part : sourceRoot.relativize(file)) {
                            if (part.toString().equals("internal")) {
                                return false;
                            }
                        }
                        return true;
                    })
                    .sorted()
                    .toList();
        }
    }

    /** One line per undocumented visible type or package of {@code sources}, which are parsed, not compiled. */
    private static List<String> undocumented(List<Path> sources) throws IOException {
        List<String> undocumented = new ArrayList<>();
        if (sources.isEmpty()) {
            return undocumented;
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        try (StandardJavaFileManager fileManager = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            JavacTask task = (JavacTask) javac.getTask(null, fileManager, null, List.of("-proc:none"), null,
                    fileManager.getJavaFileObjectsFromPaths(sources));
            DocTrees trees = DocTrees.instance(task);
            for (CompilationUnitTree unit : task.parse()) {
                TreePath unitPath = new TreePath(unit);
                String file = unit.getSourceFile().getName();
                if (file.endsWith("package-info.java") && unit.getPackage() != null
                        && trees.getDocCommentTree(new TreePath(unitPath, unit.getPackage())) == null) {
                    undocumented.add(file + ": package " + unit.getPackageName());
                }
                for (Tree type : unit.getTypeDecls()) {
                    if (type instanceof ClassTree classTree) {
                        check(trees, new TreePath(unitPath, classTree), false, file, undocumented);
                    }
                }
            }
        }
        return undocumented;
    }

    private static void check(DocTrees trees, TreePath path, boolean inInterface, String file, List<String> undocumented) {
        ClassTree type = (ClassTree) path.getLeaf();
        ModifiersTree modifiers = type.getModifiers();
        boolean visible = modifiers.getFlags().contains(Modifier.PUBLIC)
                || modifiers.getFlags().contains(Modifier.PROTECTED)
                || (inInterface && !modifiers.getFlags().contains(Modifier.PRIVATE));
        if (!visible) {
            return; // and neither are the types nested in it
        }
        if (trees.getDocCommentTree(path) == null) {
            undocumented.add(file + ": type " + type.getSimpleName());
        }
        boolean isInterface = type.getKind() == Tree.Kind.INTERFACE || type.getKind() == Tree.Kind.ANNOTATION_TYPE;
        for (Tree member : type.getMembers()) {
            if (member instanceof ClassTree) {
                check(trees, new TreePath(path, member), isInterface, file, undocumented);
            }
        }
    }
}
