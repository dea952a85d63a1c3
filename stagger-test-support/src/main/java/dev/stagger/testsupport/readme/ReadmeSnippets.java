package dev.stagger.testsupport.readme;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicTest;

/**
 * Finds every {@code ```java} block in the repository's Markdown (every {@code README.md} and
 * {@code docs/**.md}) and compiles it against the project's classes, so no snippet can rot.
 *
 * <p>A block that declares a top-level type is compiled as written (a whole file). Any other
 * block is wrapped: the statements go into a method of a class, or, when they do not compile as
 * statements, the block is tried as the class's members (methods, fields, {@code @Bean}
 * definitions). The wrapper imports every API package of the project and the JDK packages
 * snippets use ({@link #IMPORTED}), preferring the project's type where a simple name clashes
 * ({@code dev.stagger.Clock} over {@code java.time.Clock}).
 *
 * <p>What a snippet takes for granted is declared in an HTML comment right before its fence,
 * invisible on the rendered page:
 * <pre>
 * &lt;!-- snippet: any words saying what is assumed
 * import org.slf4j.MDC;
 * MeterRegistry registry; HttpRequest postOrder;
 * prefix: WorkerPool.builder(jobs, "mail")
 * suffix: .build();
 * --&gt;
 * </pre>
 * {@code import} lines are added to the imports; {@code prefix:} and {@code suffix:} are code
 * placed right before and after the block (for a block that continues an expression); every
 * other line is a member of the wrapping class (fields, methods, nested types standing in for a
 * framework's). Other one-line comments may stand between the marker and the fence (another
 * test's {@code <!-- example:begin -->}). A failure names the Markdown file and the line of each
 * error in it.
 *
 * <p>A snippet using a module whose classes cannot be on stagger-cli's test class path (the Spring
 * Boot starter, which brings Spring Boot's own versions) says which module compiles it:
 * {@code compiled-by: stagger-spring-boot-autoconfigure}. That module's tests run
 * {@link #compiledBy} on its own class path (through stagger-test-support, a test dependency);
 * {@code ReadmeSnippetsTest} checks that the module exists and does so.
 */
public final class ReadmeSnippets {
    /** JDK and library packages every wrapped snippet imports. */
    static final List<String> IMPORTED = List.of("java.io", "java.net", "java.net.http", "java.nio.charset", "java.nio.file",
            "java.sql", "java.time", "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "java.util.function",
            "javax.sql", "jakarta.servlet", "jakarta.servlet.http", "org.eclipse.jetty.ee10.servlet",
            "io.micrometer.core.instrument", "org.slf4j");
    private static final Pattern OPEN = Pattern.compile("^```java\\s*$");
    private static final Pattern CLOSE = Pattern.compile("^```\\s*$");
    private static final Pattern TOP_LEVEL_TYPE = Pattern.compile(
            "(?m)^(?:public\\s+|final\\s+|abstract\\s+|sealed\\s+)*(?:class|interface|record|enum)\\s+(\\w+)");
    private static final String MARKER = "<!-- snippet";
    private static final Pattern ONE_LINE_COMMENT = Pattern.compile("^\\s*<!--.*-->\\s*$");
    private static final String COMPILED_BY = "compiled-by:";
    /** The module whose tests compile the snippets that name no other: this one. */
    public static final String THIS_MODULE = "stagger-cli";

    private ReadmeSnippets() {
    }

    /** One {@code ```java} block: where it is, what it says, and what its marker declares. */
    public record Snippet(Path file, String shownPath, int fenceLine, List<String> code, Context context) {
        /** "stagger-http/README.md:9", the place of the fence. */
        public String place() {
            return shownPath + ":" + fenceLine;
        }

        String className() {
            return "Snippet_" + shownPath.replaceAll("[^A-Za-z0-9]", "_") + "_" + fenceLine;
        }
    }

    /** What a marker comment declares; {@code compiledBy} is the module whose tests compile the snippet. */
    public record Context(List<String> imports, List<String> members, List<String> prefix, List<String> suffix,
                          String compiledBy) {
        static final Context NONE = new Context(List.of(), List.of(), List.of(), List.of(), THIS_MODULE);
    }

    /** The outcome of compiling one snippet: empty {@code errors} when it compiled. */
    public record Result(Snippet snippet, String form, List<String> errors) {
        public boolean compiled() {
            return errors.isEmpty();
        }

        /** "README.md:139: does not compile ..." with one line per error at its place in the Markdown file. */
        public String report() {
            return snippet.place() + ": the ```java block does not compile (" + form + "):\n  " + String.join("\n  ", errors)
                    + "\n  (declare what it takes for granted in a '<!-- snippet ... -->' comment before the fence: see "
                    + ReadmeSnippets.class.getName() + ")";
        }
    }

    /** The repository root: the nearest directory above the working directory with a pom listing modules. */
    public static Path repositoryRoot() throws IOException {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path pom = d.resolve("pom.xml");
            if (Files.isRegularFile(pom) && Files.readString(pom).contains("<modules>")) {
                return d;
            }
        }
        throw new IllegalStateException("no pom.xml with <modules> above " + Path.of("").toAbsolutePath());
    }

    /** Every README.md below {@code root} and every Markdown file under {@code root/docs}, build output excluded. */
    public static List<Path> markdownFiles(Path root) throws IOException {
        try (Stream<Path> all = Files.walk(root)) {
            return all.filter(Files::isRegularFile)
                    .filter(p -> !excluded(root.relativize(p)))
                    .filter(p -> p.getFileName().toString().equals("README.md")
                            || (root.relativize(p).startsWith("docs") && p.toString().endsWith(".md")))
                    .sorted()
                    .toList();
        }
    }

    private static boolean excluded(Path relative) {
        for (Path part : relative) {
            String name = part.toString();
            if (name.equals("target") || name.equals("node_modules") || name.startsWith(".")) {
                return true;
            }
        }
        return false;
    }

    /** The {@code ```java} blocks of every Markdown file below {@code root} ({@link #markdownFiles}), in order. */
    public static List<Snippet> allSnippets(Path root) throws IOException {
        List<Snippet> all = new ArrayList<>();
        for (Path md : markdownFiles(root)) {
            all.addAll(snippets(md, root.relativize(md).toString().replace('\\', '/')));
        }
        return all;
    }

    /** The snippets of {@code all} whose marker says {@code compiled-by: module} (none: stagger-cli). */
    public static List<Snippet> compiledBy(List<Snippet> all, String module) {
        return all.stream().filter(s -> s.context().compiledBy().equals(module)).toList();
    }

    /**
     * One test per README block marked {@code compiled-by: module}, compiling it on this JVM's class
     * path: the whole of a module's README snippet test. Fails when no block names the module.
     */
    public static Stream<DynamicTest> compiledBy(String module) throws IOException {
        List<Snippet> ours = compiledBy(allSnippets(repositoryRoot()), module);
        if (ours.isEmpty()) {
            throw new AssertionError("no README block is marked 'compiled-by: " + module + "'");
        }
        return compile(ours, System.getProperty("java.class.path")).stream().map(r -> DynamicTest.dynamicTest(
                r.snippet().place(), () -> {
                    if (!r.compiled()) {
                        throw new AssertionError(r.report());
                    }
                }));
    }

    /** The {@code ```java} blocks of {@code file}, with their markers; {@code shownPath} names the file in reports. */
    public static List<Snippet> snippets(Path file, String shownPath) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<Snippet> found = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (!OPEN.matcher(lines.get(i)).matches()) {
                continue;
            }
            int end = i + 1;
            while (end < lines.size() && !CLOSE.matcher(lines.get(end)).matches()) {
                end++;
            }
            if (end == lines.size()) {
                throw new IllegalStateException(shownPath + ":" + (i + 1) + ": a ```java block that is never closed");
            }
            found.add(new Snippet(file, shownPath, i + 1, List.copyOf(lines.subList(i + 1, end)), marker(lines, i)));
            i = end;
        }
        return found;
    }

    /** The context declared by a {@code <!-- snippet ... -->} comment ending just before the fence at {@code fence}. */
    private static Context marker(List<String> lines, int fence) {
        int last = fence - 1;
        while (last >= 0 && (lines.get(last).isBlank() || otherOneLineComment(lines.get(last)))) {
            last--;
        }
        if (last < 0 || !lines.get(last).strip().endsWith("-->")) {
            return Context.NONE;
        }
        int first = last;
        while (first >= 0 && !lines.get(first).contains("<!--")) {
            first--;
        }
        if (first < 0 || !lines.get(first).strip().startsWith(MARKER)) {
            return Context.NONE;
        }
        List<String> imports = new ArrayList<>();
        List<String> members = new ArrayList<>();
        List<String> prefix = new ArrayList<>();
        List<String> suffix = new ArrayList<>();
        String compiledBy = THIS_MODULE;
        for (int i = first + 1; i <= last; i++) {
            String line = lines.get(i);
            if (i == last) {
                line = line.substring(0, line.lastIndexOf("-->"));
            }
            String s = line.strip();
            if (s.isEmpty()) {
                continue;
            }
            if (s.startsWith("import ")) {
                imports.add(s);
            } else if (s.startsWith("prefix:")) {
                prefix.add(s.substring("prefix:".length()).strip());
            } else if (s.startsWith("suffix:")) {
                suffix.add(s.substring("suffix:".length()).strip());
            } else if (s.startsWith(COMPILED_BY)) {
                compiledBy = s.substring(COMPILED_BY.length()).strip();
            } else {
                members.add(line);
            }
        }
        return new Context(imports, members, prefix, suffix, compiledBy);
    }

    /** A comment on one line that is not a snippet marker: another test's {@code <!-- example:begin -->}. */
    private static boolean otherOneLineComment(String line) {
        return ONE_LINE_COMMENT.matcher(line).matches() && !line.strip().startsWith(MARKER);
    }

    /** Compiles every snippet against {@code classPath}; one result per snippet, in order. */
    public static List<Result> compile(List<Snippet> snippets, String classPath) throws IOException {
        Imports imports = Imports.of(classPath);
        Map<Snippet, Result> results = new LinkedHashMap<>();
        List<Source> wrapped = new ArrayList<>();
        for (Snippet s : snippets) {
            String code = String.join("\n", s.code());
            Matcher unit = TOP_LEVEL_TYPE.matcher(code);
            if (unit.find()) { // a whole file: compiled as written, on its own (names may repeat across files)
                Source source = Source.asWritten(s, unit.group(1));
                results.put(s, result(source, compileAll(List.of(source), classPath).get(source)));
            } else {
                wrapped.add(Source.wrapped(s, imports, false));
            }
        }
        Map<Source, List<Diagnostic<? extends JavaFileObject>>> asStatements = compileAll(wrapped, classPath);
        List<Source> retry = new ArrayList<>();
        for (Source source : wrapped) {
            if (asStatements.get(source).isEmpty()) {
                results.put(source.snippet, result(source, List.of()));
            } else {
                retry.add(Source.wrapped(source.snippet, imports, true));
            }
        }
        Map<Source, List<Diagnostic<? extends JavaFileObject>>> asMembers = compileAll(retry, classPath);
        for (Source members : retry) {
            Source statements = wrapped.stream().filter(w -> w.snippet == members.snippet).findFirst().orElseThrow();
            List<Diagnostic<? extends JavaFileObject>> m = asMembers.get(members);
            List<Diagnostic<? extends JavaFileObject>> st = asStatements.get(statements);
            // report the members reading only when it compiles or gets past the parser where the statements did not
            boolean membersRead = m.isEmpty() || (st.stream().anyMatch(ReadmeSnippets::syntaxError)
                    && m.stream().noneMatch(ReadmeSnippets::syntaxError));
            results.put(members.snippet, membersRead ? result(members, m) : result(statements, st));
        }
        List<Result> ordered = new ArrayList<>();
        for (Snippet s : snippets) {
            ordered.add(results.get(s));
        }
        return ordered;
    }

    /** An error of the parser (the text is not Java in this reading), not of types or names. */
    private static boolean syntaxError(Diagnostic<? extends JavaFileObject> d) {
        String code = String.valueOf(d.getCode());
        return code.startsWith("compiler.err.expected") || code.startsWith("compiler.err.illegal.start")
                || code.equals("compiler.err.premature.eof") || code.equals("compiler.err.not.stmt")
                || code.equals("compiler.err.invalid.meth.decl.ret.type.req") || code.equals("compiler.err.orphaned");
    }

    private static Result result(Source source, List<Diagnostic<? extends JavaFileObject>> errors) {
        List<String> lines = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : errors) {
            lines.add(source.snippet.shownPath + ":" + source.markdownLine(d.getLineNumber()) + ": "
                    + d.getMessage(Locale.ROOT).replace("\n", " ") + source.codeAt(d.getLineNumber()));
        }
        return new Result(source.snippet, source.form, lines);
    }

    /**
     * The errors of each source. Compiled together for speed; but javac stops before type-checking
     * anything when one file does not parse, so the sources with errors are set aside and the rest
     * compiled again until a round has no error: every source of that round compiles.
     */
    private static Map<Source, List<Diagnostic<? extends JavaFileObject>>> compileAll(List<Source> sources, String classPath)
            throws IOException {
        Map<Source, List<Diagnostic<? extends JavaFileObject>>> byFile = new LinkedHashMap<>();
        for (Source s : sources) {
            byFile.put(s, List.of());
        }
        List<Source> remaining = new ArrayList<>(sources);
        while (!remaining.isEmpty()) {
            Map<Source, List<Diagnostic<? extends JavaFileObject>>> round = compileRound(remaining, classPath);
            List<Source> failed = remaining.stream().filter(s -> !round.get(s).isEmpty()).toList();
            if (failed.isEmpty()) {
                break;
            }
            failed.forEach(s -> byFile.put(s, round.get(s)));
            remaining.removeAll(failed);
        }
        return byFile;
    }

    private static Map<Source, List<Diagnostic<? extends JavaFileObject>>> compileRound(List<Source> sources, String classPath)
            throws IOException {
        Map<Source, List<Diagnostic<? extends JavaFileObject>>> byFile = new LinkedHashMap<>();
        for (Source s : sources) {
            byFile.put(s, new ArrayList<>());
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null) {
            throw new IllegalStateException("a JDK (not a JRE) must run the README snippet tests");
        }
        Path out = Files.createTempDirectory("readme-snippets");
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
            List<String> options = List.of("-classpath", classPath, "-d", out.toString(), "-proc:none", "-implicit:none",
                    "-Xmaxerrs", "10000");
            compiler.getTask(null, files, diagnostics, options, null, sources).call();
        } finally {
            deleteTree(out);
        }
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR && d.getSource() instanceof Source s && byFile.containsKey(s)) {
                byFile.get(s).add(d);
            }
        }
        return byFile;
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> all = Files.walk(root)) {
            for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** A generated (or as-written) compilation unit, mapping its lines back to the Markdown file. */
    private static final class Source extends SimpleJavaFileObject {
        final Snippet snippet;
        final String form;
        final String text;
        /** Line of the source (1-based) holding the snippet's first line. */
        final int firstCodeLine;

        private Source(Snippet snippet, String className, String form, String text, int firstCodeLine) {
            super(URI.create("string:///" + className + Kind.SOURCE.extension), Kind.SOURCE);
            this.snippet = snippet;
            this.form = form;
            this.text = text;
            this.firstCodeLine = firstCodeLine;
        }

        static Source asWritten(Snippet s, String className) {
            return new Source(s, className, "as a whole file", String.join("\n", s.code()) + "\n", 1);
        }

        static Source wrapped(Snippet s, Imports imports, boolean asMembers) {
            StringBuilder b = new StringBuilder();
            for (String i : imports.lines()) {
                b.append(i).append('\n');
            }
            for (String i : s.context().imports()) {
                b.append(i).append('\n');
            }
            b.append("@SuppressWarnings(\"all\")\n");
            b.append("class ").append(s.className()).append(" {\n");
            for (String m : s.context().members()) {
                b.append(m).append('\n');
            }
            if (!asMembers) {
                b.append("void snippet() throws Throwable {\n");
            }
            for (String p : s.context().prefix()) {
                b.append(p).append('\n');
            }
            int first = (int) b.chars().filter(c -> c == '\n').count() + 1;
            for (String line : s.code()) {
                b.append(line).append('\n');
            }
            for (String p : s.context().suffix()) {
                b.append(p).append('\n');
            }
            if (!asMembers) {
                b.append("}\n");
            }
            b.append("}\n");
            return new Source(s, s.className(), asMembers ? "as class members" : "as statements", b.toString(), first);
        }

        /** The Markdown line of source line {@code line}; lines outside the snippet map to its fence. */
        int markdownLine(long line) {
            long offset = line - firstCodeLine;
            return offset >= 0 && offset < snippet.code().size() ? snippet.fenceLine() + 1 + (int) offset : snippet.fenceLine();
        }

        /** ": `code`" for a line of the snippet, or the generated line for context, or nothing. */
        String codeAt(long line) {
            String[] all = text.split("\n", -1);
            if (line < 1 || line > all.length) {
                return "";
            }
            long offset = line - firstCodeLine;
            String where = offset >= 0 && offset < snippet.code().size() ? "" : " (in the declared context)";
            return where + ": `" + all[(int) line - 1].strip() + "`";
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }
    }
}
