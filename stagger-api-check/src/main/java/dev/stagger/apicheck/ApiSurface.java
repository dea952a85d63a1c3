package dev.stagger.apicheck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The public surface of one module, read from its compiled classes: which types are visible from
 * outside (public, or protected inside a visible type, and not local or anonymous), which of them
 * are API (outside any {@code internal} package), the dump of the API types' visible members, and
 * the places where the API mentions an internal type.
 *
 * <p>Run as a program it prints the public-type counts of every module under a project directory,
 * or, with {@code dump}, rewrites every module's {@code api/<module>.api} file:
 * <pre>
 * java -cp stagger-api-check/target/classes dev.stagger.apicheck.ApiSurface count .
 * java -cp stagger-api-check/target/classes dev.stagger.apicheck.ApiSurface dump .
 * </pre>
 */
public final class ApiSurface {

    /** Modules that are not libraries: nothing depends on their classes. */
    private static final List<String> NOT_PUBLISHED = List.of("stagger-benchmarks", "stagger-api-check", "stagger-test-support");

    private final String module;
    private final List<ClassFile> visible;

    private ApiSurface(String module, List<ClassFile> visible) {
        this.module = module;
        this.visible = visible;
    }

    /** The surface of the classes compiled into {@code classes} (a {@code target/classes} directory). */
    public static ApiSurface read(String module, Path classes) {
        Map<String, ClassFile> all = new HashMap<>();
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String name = file.getFileName().toString();
                if (name.equals("module-info.class") || name.equals("package-info.class")) {
                    continue;
                }
                ClassFile c = ClassFile.read(Files.readAllBytes(file));
                all.put(c.name, c);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<ClassFile> visible = all.values().stream()
                .filter(c -> isVisible(c, all))
                .sorted(Comparator.comparing(c -> c.name))
                .toList();
        return new ApiSurface(module, visible);
    }

    /** The modules of a project: every {@code stagger-*} directory with compiled classes, except tools. */
    public static Map<String, Path> modules(Path projectRoot) {
        Map<String, Path> modules = new TreeMap<>();
        try (Stream<Path> dirs = Files.list(projectRoot)) {
            dirs.filter(d -> d.getFileName().toString().startsWith("stagger-"))
                    .filter(d -> Files.isDirectory(d.resolve("src/main/java")))
                    .filter(d -> !NOT_PUBLISHED.contains(d.getFileName().toString()))
                    .forEach(d -> modules.put(d.getFileName().toString(), d));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return modules;
    }

    /** Where a module's checked-in dump lives. */
    public static Path dumpFile(Path moduleDir) {
        return moduleDir.resolve("api").resolve(moduleDir.getFileName() + ".api");
    }

    private static boolean isVisible(ClassFile c, Map<String, ClassFile> all) {
        if (c.localOrAnonymous || (c.access & ClassFile.SYNTHETIC) != 0) {
            return false;
        }
        if ((c.access & (ClassFile.PUBLIC | ClassFile.PROTECTED)) == 0) {
            return false;
        }
        if (!c.nested) {
            return true;
        }
        ClassFile outer = all.get(c.outer);
        return outer != null && isVisible(outer, all);
    }

    static boolean isInternal(String packageName) {
        return packageName.equals("internal") || packageName.contains(".internal")
                || packageName.contains("/internal");
    }

    /** Visible types in API packages. */
    public long apiTypes() {
        return visible.stream().filter(c -> !isInternal(c.packageName())).count();
    }

    /** Visible (public) types in internal packages. */
    public long internalTypes() {
        return visible.stream().filter(c -> isInternal(c.packageName())).count();
    }

    /** The dump: one block per API type, its visible members sorted, in Java notation. */
    public String dump() {
        StringBuilder out = new StringBuilder();
        for (ClassFile c : visible) {
            if (isInternal(c.packageName())) {
                continue;
            }
            out.append(header(c, name -> { })).append(" {\n");
            TreeSet<String> members = new TreeSet<>();
            for (ClassFile.Member m : c.fields) {
                if (isVisible(c, m)) {
                    members.add(field(m, name -> { }));
                }
            }
            for (ClassFile.Member m : c.methods) {
                if (isVisible(c, m)) {
                    members.add(method(c, m, name -> { }));
                }
            }
            members.forEach(m -> out.append("  ").append(m).append('\n'));
            out.append("}\n\n");
        }
        return out.toString();
    }

    /** Every place where an API type's visible declaration names a type from an internal package. */
    public List<String> internalLeaks() {
        List<String> leaks = new ArrayList<>();
        for (ClassFile c : visible) {
            if (isInternal(c.packageName())) {
                continue;
            }
            String where = c.javaName();
            header(c, name -> leak(leaks, where, name));
            for (ClassFile.Member m : c.fields) {
                if (isVisible(c, m)) {
                    field(m, name -> leak(leaks, where + "." + m.name(), name));
                }
            }
            for (ClassFile.Member m : c.methods) {
                if (isVisible(c, m)) {
                    method(c, m, name -> leak(leaks, where + "." + m.name() + "(..)", name));
                }
            }
        }
        return leaks;
    }

    private static void leak(List<String> leaks, String where, String binaryName) {
        int slash = binaryName.lastIndexOf('/');
        if (slash > 0 && isInternal(binaryName.substring(0, slash))) {
            leaks.add(where + " mentions " + binaryName.replace('/', '.').replace('$', '.'));
        }
    }

    private static boolean isVisible(ClassFile c, ClassFile.Member m) {
        if ((m.access() & (ClassFile.SYNTHETIC | ClassFile.BRIDGE)) != 0 || m.name().equals("<clinit>")) {
            return false;
        }
        if ((m.access() & ClassFile.PUBLIC) != 0) {
            return true;
        }
        return (m.access() & ClassFile.PROTECTED) != 0 && (c.access & ClassFile.FINAL) == 0;
    }

    private static String header(ClassFile c, java.util.function.Consumer<String> seen) {
        StringBuilder out = new StringBuilder();
        int a = c.access;
        out.append((a & ClassFile.PUBLIC) != 0 ? "public " : "protected ");
        if (c.nested && (a & ClassFile.STATIC) != 0 && (a & ClassFile.INTERFACE) == 0 && (a & ClassFile.ENUM) == 0) {
            out.append("static ");
        }
        boolean isInterface = (a & ClassFile.INTERFACE) != 0;
        boolean isRecord = "java/lang/Record".equals(c.superName);
        if ((a & ClassFile.ANNOTATION) != 0) {
            out.append("@interface ");
        } else if (isInterface) {
            out.append("interface ");
        } else if ((a & ClassFile.ENUM) != 0) {
            out.append("enum ");
        } else if (isRecord) {
            out.append("record ");
        } else {
            if ((a & ClassFile.ABSTRACT) != 0) {
                out.append("abstract ");
            }
            if ((a & ClassFile.FINAL) != 0) {
                out.append("final ");
            }
            out.append("class ");
        }
        out.append(c.javaName());
        String superclass;
        List<String> interfaces;
        if (c.signature != null) {
            Signatures.Type t = Signatures.classSignature(c.signature, seen);
            out.append(t.typeParameters());
            superclass = t.superclass();
            interfaces = t.interfaces();
        } else {
            superclass = c.superName == null ? null : Signatures.type("L" + c.superName + ";", seen);
            interfaces = c.interfaces.stream().map(i -> Signatures.type("L" + i + ";", seen)).toList();
        }
        if (superclass != null && !isInterface && !isRecord && (a & ClassFile.ENUM) == 0
                && !superclass.equals("java.lang.Object")) {
            out.append(" extends ").append(superclass);
        }
        List<String> shown = interfaces.stream()
                .filter(i -> !i.equals("java.lang.annotation.Annotation"))
                .toList();
        if (!shown.isEmpty()) {
            out.append(isInterface ? " extends " : " implements ").append(String.join(", ", shown));
        }
        return out.toString();
    }

    private static String field(ClassFile.Member m, java.util.function.Consumer<String> seen) {
        return modifiers(m.access(), false) + Signatures.type(
                m.signature() != null ? m.signature() : m.descriptor(), seen) + " " + m.name();
    }

    private static String method(ClassFile c, ClassFile.Member m, java.util.function.Consumer<String> seen) {
        Signatures.Method s = Signatures.method(m.signature() != null ? m.signature() : m.descriptor(), seen);
        List<String> parameters = new ArrayList<>(s.parameters());
        if (m.signature() != null) {
            // a generic signature leaves out the synthetic parameters the descriptor has; read the
            // descriptor too so that every type the method can be called with is checked
            Signatures.method(m.descriptor(), seen);
        }
        if ((m.access() & ClassFile.VARARGS) != 0 && !parameters.isEmpty()) {
            int last = parameters.size() - 1;
            String p = parameters.get(last);
            parameters.set(last, p.substring(0, p.length() - 2) + "...");
        }
        List<String> thrown = new ArrayList<>(s.thrown());
        if (thrown.isEmpty()) {
            m.exceptions().forEach(e -> thrown.add(Signatures.type("L" + e + ";", seen)));
        }
        boolean inInterface = (c.access & ClassFile.INTERFACE) != 0;
        String name = m.name().equals("<init>") ? c.javaName().substring(c.javaName().lastIndexOf('.') + 1) : m.name();
        StringBuilder out = new StringBuilder(modifiers(m.access(), inInterface));
        if (!s.typeParameters().isEmpty()) {
            out.append(s.typeParameters()).append(' ');
        }
        if (!m.name().equals("<init>")) {
            out.append(s.result()).append(' ');
        }
        out.append(name).append('(').append(String.join(", ", parameters)).append(')');
        if (!thrown.isEmpty()) {
            out.append(" throws ").append(String.join(", ", thrown));
        }
        return out.toString();
    }

    private static String modifiers(int access, boolean inInterface) {
        StringBuilder out = new StringBuilder();
        out.append((access & ClassFile.PUBLIC) != 0 ? "public " : "protected ");
        if ((access & ClassFile.STATIC) != 0) {
            out.append("static ");
        }
        if ((access & ClassFile.FINAL) != 0) {
            out.append("final ");
        }
        if ((access & ClassFile.ABSTRACT) != 0 && !inInterface) {
            out.append("abstract ");
        }
        if (inInterface && (access & (ClassFile.ABSTRACT | ClassFile.STATIC)) == 0) {
            out.append("default ");
        }
        return out.toString();
    }

    public String module() {
        return module;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2 || !(args[0].equals("count") || args[0].equals("dump"))) {
            System.err.println("usage: ApiSurface count|dump <project directory>");
            System.exit(2);
        }
        Path root = Path.of(args[1]);
        long api = 0;
        long internal = 0;
        for (Map.Entry<String, Path> e : modules(root).entrySet()) {
            ApiSurface surface = read(e.getKey(), e.getValue().resolve("target/classes"));
            if (args[0].equals("count")) {
                System.out.printf("%-36s %4d API %4d internal%n", e.getKey(), surface.apiTypes(), surface.internalTypes());
                api += surface.apiTypes();
                internal += surface.internalTypes();
            } else {
                Path file = dumpFile(e.getValue());
                Files.createDirectories(file.getParent());
                Files.writeString(file, surface.dump(), StandardCharsets.UTF_8);
                System.out.println("wrote " + root.relativize(file));
            }
        }
        if (args[0].equals("count")) {
            System.out.printf("%-36s %4d API %4d internal%n", "total", api, internal);
        }
    }

    /** Public-type counts per package, for notes: "package: n". */
    public Map<String, Long> countsByPackage() {
        return visible.stream().collect(Collectors.groupingBy(ClassFile::packageName, TreeMap::new, Collectors.counting()));
    }
}
