package dev.stagger.idempotency.servlet;

import static dev.stagger.idempotency.support.Http.send;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.jdbc.SqliteDataSource;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The filter among the others a service runs, on a real Jetty: a filter ahead of it that reads
 * form parameters, the container's form limits, and the container's rules for the writer's
 * charset. Each answer is compared with the same application served without the filter.
 */
class FilterCompositionTest {
    @TempDir
    Path dir;

    private final AtomicInteger executions = new AtomicInteger();
    private JdbcIdempotencyStore store;
    private TestServer plain;
    private TestServer filtered;

    @BeforeEach
    void createStore() {
        store = JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("keys.db"))).build();
    }

    @AfterEach
    void stop() throws Exception {
        for (TestServer s : new TestServer[] {plain, filtered}) {
            if (s != null) {
                s.close();
            }
        }
        store.close();
    }

    /** As an RFC 6750 §2.2 authentication filter does: it looks for a form-body access_token. */
    private static final class FormTokenFilter implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            req.getParameter("access_token");
            chain.doFilter(req, res);
        }
    }

    private void startBoth(TestServer.Handler handler, Filter... ahead) throws Exception {
        plain = TestServer.start(handler, ahead);
        Filter[] withIdempotency = java.util.Arrays.copyOf(ahead, ahead.length + 1);
        withIdempotency[ahead.length] = IdempotencyFilter.builder(store).build();
        filtered = TestServer.start(handler, withIdempotency);
    }

    private static HttpRequest form(URI uri, String key, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).header(TestServer.USER_HEADER, "alice")
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return b.build();
    }

    private static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    private final TestServer.Handler echoItem = (req, res) -> {
        executions.incrementAndGet();
        res.setStatus(200);
        res.setContentType("text/plain;charset=UTF-8");
        res.getWriter().write("item=" + req.getParameter("item") + " token=" + req.getParameter("access_token"));
    };

    @Test
    void aFilterAheadThatReadsAFormParameterLeavesTheHandlerItsParameters() throws Exception {
        startBoth(echoItem, new FormTokenFilter());

        HttpResponse<byte[]> first = send(form(filtered.uri("/orders"), "k-1", "access_token=t0k&item=book"));

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(text(first)).isEqualTo("item=book token=t0k")
                .isEqualTo(text(send(form(plain.uri("/orders"), null, "access_token=t0k&item=book"))));
    }

    @Test
    void behindAFilterThatReadAFormParameterTheSameKeyWithAnotherFormBodyGets422() throws Exception {
        startBoth(echoItem, new FormTokenFilter());
        send(form(filtered.uri("/orders"), "k-1", "access_token=t0k&item=book"));
        int ran = executions.get();

        HttpResponse<byte[]> reused = send(form(filtered.uri("/orders"), "k-1", "access_token=t0k&item=piano"));

        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(executions).hasValue(ran);
        assertThat(send(form(filtered.uri("/orders"), "k-1", "access_token=t0k&item=book"))
                .headers().firstValue("Idempotent-Replayed")).contains("true");
    }

    @Test
    void aBodyAFilterAheadHasAlreadyReadIsRefusedLoudlyInsteadOfFingerprintedAsEmpty() throws Exception {
        Filter bodyReader = (req, res, chain) -> {
            req.getInputStream().readAllBytes(); // reads the body without handing it on
            chain.doFilter(req, res);
        };
        startBoth(echoItem, bodyReader);
        HttpRequest json = HttpRequest.newBuilder(filtered.uri("/orders")).header(TestServer.USER_HEADER, "alice")
                .header("Idempotency-Key", "k-json").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build();

        assertThat(send(json).statusCode()).isEqualTo(500);
        assertThat(executions).hasValue(0);
        assertThat(store.count()).isZero();
    }

    /**
     * The status of a request whose body the container refuses for its size. The container answers
     * and closes the connection once it has read up to its limit, while the client may still be
     * sending the rest: the client then sees the connection closed before the answer (an
     * {@link IOException}, seen on a loaded machine), so such a send is made again, at most thrice.
     */
    private static int refusal(HttpRequest request) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return send(request).statusCode();
            } catch (IOException closedMidBody) {
                if (attempt == 3) {
                    throw closedMidBody;
                }
            }
        }
    }

    @Test
    void aFormBodyOverTheContainersSizeLimitIsRefusedAsWithoutTheFilter() throws Exception {
        startBoth(echoItem);
        String big = "item=" + "x".repeat(300 * 1024);

        int without = refusal(form(plain.uri("/orders"), null, big));
        int with = refusal(form(filtered.uri("/orders"), "k-big", big));

        assertThat(without).isIn(400, 413);
        assertThat(with).isEqualTo(without);
        assertThat(executions).as("only the unfiltered handler ran, and failed reading its parameters").hasValue(1);
        assertThat(store.count()).isZero();
    }

    @Test
    void aFormWithMoreFieldsThanTheContainerAllowsIsRefusedAsWithoutTheFilter() throws Exception {
        startBoth(echoItem);
        String many = IntStream.range(0, 5_000).mapToObj(i -> "f" + i + "=v").collect(Collectors.joining("&"));

        int without = send(form(plain.uri("/orders"), null, many)).statusCode();
        int with = send(form(filtered.uri("/orders"), "k-many", many)).statusCode();

        assertThat(without).isIn(400, 413);
        assertThat(with).isEqualTo(without);
        assertThat(store.count()).isZero();
    }

    @Test
    void aCharsetSetAfterGetWriterLeavesHeaderAndBytesInAgreementAsWithoutTheFilter() throws Exception {
        startBoth((req, res) -> {
            executions.incrementAndGet();
            PrintWriter writer = res.getWriter();
            res.setContentType("text/plain;charset=UTF-8");
            writer.write("B\u00fccher \u00e0 1 \u00a3");
        });
        HttpRequest.Builder post = HttpRequest.newBuilder().header(TestServer.USER_HEADER, "alice")
                .POST(HttpRequest.BodyPublishers.ofString("{}"));

        HttpResponse<byte[]> without = send(post.copy().uri(plain.uri("/books")).build());
        HttpResponse<byte[]> with = send(post.copy().uri(filtered.uri("/books")).header("Idempotency-Key", "k-w").build());
        HttpResponse<byte[]> replay = send(post.copy().uri(filtered.uri("/books")).header("Idempotency-Key", "k-w").build());

        String contentType = without.headers().firstValue("Content-Type").orElseThrow();
        assertThat(decode(without)).as("the container's own answer is consistent").isEqualTo("B\u00fccher \u00e0 1 \u00a3");
        assertThat(with.headers().firstValue("Content-Type")).contains(contentType);
        assertThat(with.body()).isEqualTo(without.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(replay.headers().firstValue("Content-Type")).contains(contentType);
        assertThat(replay.body()).isEqualTo(without.body());
    }

    /** The body decoded with the charset its Content-Type names. */
    private static String decode(HttpResponse<byte[]> r) {
        String type = r.headers().firstValue("Content-Type").orElseThrow();
        int at = type.toLowerCase(java.util.Locale.ROOT).indexOf("charset=");
        Charset charset = at < 0 ? StandardCharsets.ISO_8859_1 : Charset.forName(type.substring(at + 8).trim());
        return new String(r.body(), charset);
    }
}
