package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.stagger.testsupport.readme.ReadmeSnippets;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.io.File;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * {@code examples/spring-boot}, which is not a module of the build, compiles against the starter
 * and Spring Boot as this module's tests see them, and runs: started on loopback with its embedded
 * SQLite default, and on PostgreSQL with {@code spring.datasource.url}, a quote survives the flaky
 * pricing service's 503, an order is stored and its receipt job runs.
 */
class ExampleApplicationTest {
    @TempDir
    static Path work;
    static Path classes;
    static Path example;

    @BeforeAll
    static void compile() throws Exception {
        example = ReadmeSnippets.repositoryRoot().resolve("examples/spring-boot");
        classes = Files.createDirectories(work.resolve("classes"));
        List<File> sources;
        try (Stream<Path> files = Files.walk(example.resolve("src/main/java"))) {
            sources = files.filter(f -> f.toString().endsWith(".java")).map(Path::toFile).toList();
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, null, null)) {
            List<String> options = List.of("--release", "17", "-parameters", "-proc:none", "-Xlint:all", "-Werror",
                    "-classpath", System.getProperty("java.class.path"), "-d", classes.toString());
            boolean compiled = javac.getTask(null, files, diagnostics, options, null, files.getJavaFileObjectsFromFiles(sources)).call();
            assertThat(compiled).withFailMessage(() -> "examples/spring-boot does not compile: " + diagnostics.getDiagnostics()).isTrue();
        }
    }

    @Test
    void theExampleCompiles() {
        assertThat(classes.resolve("dev/stagger/example/ShopApplication.class")).exists();
    }

    /**
     * Spring Security is on this module's test class path (ShopApplicationTest uses it); the example
     * does not, so its auto-configuration, which would put every path behind a login, is left out.
     * Likewise JPA and jOOQ.
     */
    private static final String WITHOUT_SPRING_SECURITY = "--spring.autoconfigure.exclude="
            + "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration,"
            + TestAutoConfigurations.JPA_AND_JOOQ; // nor does it use JPA or jOOQ (RetriedJpaTransactionsTest does)

    @Test
    void theExampleStartsOnSqliteAndServesThroughItsFlakyDownstream() throws Exception {
        startAndServe("--spring.datasource.url=jdbc:sqlite:" + work.resolve("shop.db"));
    }

    /** The README's one property: {@code spring.datasource.url}. */
    @Test
    void theExampleStartsOnPostgresqlWithOneProperty() throws Exception {
        DataSource postgres = TestDatabases.postgres(); // skipped (failed under CI=true) without PostgreSQL
        String url = env("STAGGER_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test") + "?user=" + env("STAGGER_PG_USER", "postgres")
                + (env("STAGGER_PG_PASSWORD", "").isEmpty() ? "" : "&password=" + env("STAGGER_PG_PASSWORD", ""));
        // the job tables under a prefix of this run's own, so another build's pool cannot take this run's receipt job
        String prefix = "example_" + Long.toHexString(System.nanoTime()) + "_";
        try {
            startAndServe("--spring.datasource.url=" + url, "--stagger.jobs.table-prefix=" + prefix);
        } finally {
            dropTables(postgres, prefix);
        }
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }

    private static void dropTables(DataSource ds, String prefix) throws Exception {
        List<String> tables = new ArrayList<>();
        try (Connection c = ds.getConnection()) {
            try (ResultSet rs = c.getMetaData().getTables(null, null, prefix + "%", new String[] {"TABLE"})) {
                while (rs.next()) {
                    tables.add(rs.getString("TABLE_NAME"));
                }
            }
            try (Statement st = c.createStatement()) {
                for (String table : tables) {
                    st.execute("DROP TABLE IF EXISTS " + table + " CASCADE");
                }
            }
        }
    }

    private void startAndServe(String... arguments) throws Exception {
        URL[] path = {classes.toUri().toURL(), example.resolve("src/main/resources").toUri().toURL()};
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader loader = new URLClassLoader(path, getClass().getClassLoader())) {
            Thread.currentThread().setContextClassLoader(loader);
            SpringApplication app = new SpringApplication(new DefaultResourceLoader(loader),
                    loader.loadClass("dev.stagger.example.ShopApplication"));
            List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1", WITHOUT_SPRING_SECURITY));
            args.addAll(List.of(arguments));
            try (ConfigurableApplicationContext context = app.run(args.toArray(String[]::new))) {
                String base = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
                HttpClient client = HttpClient.newHttpClient();

                HttpResponse<String> quote = client.send(HttpRequest.newBuilder(URI.create(base + "/quotes/tea")).build(),
                        HttpResponse.BodyHandlers.ofString());
                HttpResponse<String> order = client.send(HttpRequest.newBuilder(URI.create(base + "/orders"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"tea\",\"quantity\":2}")).build(),
                        HttpResponse.BodyHandlers.ofString());

                assertThat(quote.statusCode()).as(quote.body()).isEqualTo(200);
                assertThat(JsonPath.<Integer>read(quote.body(), "$.price")).isBetween(100, 999);
                assertThat(order.statusCode()).as(order.body()).isEqualTo(201);
                assertThat(receiptsSent(client, base)).isEqualTo(1);
                String stagger = client.send(HttpRequest.newBuilder(URI.create(base + "/actuator/stagger")).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                assertThat(JsonPath.<Integer>read(stagger, "$.retries.pricing.calls.recovered")).isEqualTo(1);
            }
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }

    /** The receipt job runs on the pool's threads after the order's transaction commits. */
    private static int receiptsSent(HttpClient client, String base) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        List<Integer> seen = new ArrayList<>();
        while (System.nanoTime() < until) {
            String body = client.send(HttpRequest.newBuilder(URI.create(base + "/receipts")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            int sent = JsonPath.read(body, "$.sent");
            seen.add(sent);
            if (sent > 0) {
                return sent;
            }
            Thread.sleep(20);
        }
        return seen.isEmpty() ? -1 : seen.get(seen.size() - 1);
    }
}
