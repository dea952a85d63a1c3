package dev.stagger.testsupport.readme;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The imports of a wrapped README snippet: every API package of the project (found on the class
 * path, {@code internal} packages left out) and those of {@link ReadmeSnippets#IMPORTED} the class
 * path holds, each on demand;
 * where a project type's simple name also exists in another imported package, a single-type
 * import of the project's type, which wins over the on-demand ones.
 */
record Imports(List<String> lines) {

    static Imports of(String classPath) throws IOException {
        Map<String, Set<String>> classesByPackage = new TreeMap<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            Path p = Path.of(entry);
            if (isProjectMainOutput(p)) {
                scan(p, classesByPackage);
            }
        }
        Set<String> projectPackages = new TreeSet<>();
        for (String pkg : classesByPackage.keySet()) {
            if (pkg.startsWith("dev.stagger") && !pkg.contains(".internal") && !pkg.startsWith("dev.stagger.cli")
                    && !pkg.startsWith("dev.stagger.testsupport")) {
                projectPackages.add(pkg);
            }
        }
        Map<String, Set<String>> inJars = new TreeMap<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            Path p = Path.of(entry);
            if (Files.isRegularFile(p) && p.toString().endsWith(".jar")) {
                scan(p, inJars);
            }
        }
        Map<String, Set<String>> otherPackages = new TreeMap<>();
        for (String pkg : ReadmeSnippets.IMPORTED) {
            Set<String> names = topLevelClasses(pkg, inJars);
            if (!names.isEmpty()) { // absent from this class path (another module's tests): importing it would not compile
                otherPackages.put(pkg, names);
            }
        }
        List<String> lines = new ArrayList<>();
        for (String pkg : projectPackages) {
            lines.add("import " + pkg + ".*;");
        }
        for (String pkg : otherPackages.keySet()) {
            lines.add("import " + pkg + ".*;");
        }
        for (String pkg : projectPackages) {
            for (String name : classesByPackage.get(pkg)) {
                boolean clashes = otherPackages.values().stream().anyMatch(names -> names.contains(name));
                if (clashes) {
                    lines.add("import " + pkg + "." + name + ";");
                }
            }
        }
        return new Imports(List.copyOf(lines));
    }

    /** A module's main classes: {@code stagger-x/target/classes} or its jar, not test classes. */
    private static boolean isProjectMainOutput(Path p) {
        String s = p.toString().replace('\\', '/');
        return (s.endsWith("/target/classes") && s.contains("/stagger-"))
                || (p.getFileName() != null && p.getFileName().toString().matches("stagger-[a-z0-9]+-.*(?<!-tests)\\.jar"));
    }

    private static void scan(Path entry, Map<String, Set<String>> into) throws IOException {
        if (Files.isDirectory(entry)) {
            try (Stream<Path> all = Files.walk(entry)) {
                for (Path f : (Iterable<Path>) all::iterator) {
                    add(entry.relativize(f).toString().replace(File.separatorChar, '/'), into);
                }
            }
        } else if (Files.isRegularFile(entry)) {
            try (JarFile jar = new JarFile(entry.toFile())) {
                for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                    add(e.nextElement().getName(), into);
                }
            }
        }
    }

    private static void add(String path, Map<String, Set<String>> into) {
        if (!path.endsWith(".class") || path.contains("$") || path.endsWith("module-info.class")
                || path.endsWith("package-info.class") || !path.contains("/")) {
            return;
        }
        int slash = path.lastIndexOf('/');
        into.computeIfAbsent(path.substring(0, slash).replace('/', '.'), k -> new TreeSet<>())
                .add(path.substring(slash + 1, path.length() - ".class".length()));
    }

    /** Simple names of the top-level classes of {@code pkg}: from the JDK's modules, else from the jars. */
    private static Set<String> topLevelClasses(String pkg, Map<String, Set<String>> inJars) throws IOException {
        for (Module m : ModuleLayer.boot().modules()) {
            if (m.getPackages().contains(pkg)) {
                Set<String> names = new TreeSet<>();
                FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
                try (Stream<Path> files = Files.list(jrt.getPath("modules", m.getName(), pkg.replace('.', '/')))) {
                    files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".class") && !n.contains("$"))
                            .forEach(n -> names.add(n.substring(0, n.length() - ".class".length())));
                }
                return names;
            }
        }
        return inJars.getOrDefault(pkg, Set.of());
    }
}
