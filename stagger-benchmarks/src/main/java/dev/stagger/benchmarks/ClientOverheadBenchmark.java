package dev.stagger.benchmarks;

import dev.stagger.feign.RetryingCapability;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.httpclient5.RetryingAsyncClient;
import dev.stagger.httpclient5.RetryingExecChainHandler;
import dev.stagger.okhttp.RetryingInterceptor;
import feign.Client;
import feign.Feign;
import feign.RequestLine;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.hc.client5.http.async.methods.SimpleHttpRequest;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.io.CloseMode;
import okhttp3.OkHttpClient;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import okhttp3.Request;
import okhttp3.Response;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What Stagger's integration adds to one successful call of each HTTP client it supports, next to
 * the same client without it, against one loopback server (Jetty) answering 200 at once (the happy path:
 * no retry, so the cost is planning the exchange, the attempt headers, the classification and the
 * budget deposit). {@code X_direct} is the client alone, {@code X_stagger} the client with Stagger;
 * the table prints the difference in ns. The loopback round trip dominates both, so read the
 * difference, not the ratio.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ClientOverheadBenchmark {
    /** The Feign interface both Feign clients call. */
    public interface Items {
        @RequestLine("GET /items")
        String items();
    }

    private Server server;
    private URI uri;
    private RetryingHttpClient rules;

    private HttpClient jdk;
    private RetryingHttpClient jdkStagger;
    private HttpRequest jdkRequest;
    private OkHttpClient okDirect;
    private OkHttpClient okStagger;
    private CloseableHttpClient apacheDirect;
    private CloseableHttpClient apacheStagger;
    private CloseableHttpAsyncClient asyncDirect;
    private RetryingAsyncClient asyncStagger;
    private Items feignDirect;
    private Items feignStagger;

    @Setup
    public void setUp() throws Exception {
        byte[] ok = "ok".getBytes(StandardCharsets.UTF_8);
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response, Callback callback) throws Exception {
                Content.Source.consumeAll(request);
                response.setStatus(200);
                response.write(true, ByteBuffer.wrap(ok), callback);
                return true;
            }
        });
        server.start();
        uri = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/items");
        // the rules every Stagger client applies: defaults, no budget (nothing is retried here anyway)
        rules = RetryingHttpClient.builder().service("items").withoutBudget().build();

        jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        jdkStagger = RetryingHttpClient.builder(jdk).service("items").withoutBudget().build();
        jdkRequest = HttpRequest.newBuilder(uri).GET().build();
        okDirect = new OkHttpClient();
        okStagger = RetryingInterceptor.of(rules).applyTo(new OkHttpClient.Builder()).build();
        apacheDirect = HttpClients.custom().disableAutomaticRetries().build();
        apacheStagger = RetryingExecChainHandler.of(rules).applyTo(HttpClients.custom()).build();
        asyncDirect = HttpAsyncClients.custom().disableAutomaticRetries().build();
        asyncDirect.start();
        asyncStagger = RetryingAsyncClient.of(HttpAsyncClients.custom(), rules);
        feignDirect = Feign.builder().client(new Client.Default(null, null)).target(Items.class, uri.resolve("/").toString());
        feignStagger = Feign.builder().client(new Client.Default(null, null)).addCapability(RetryingCapability.of(rules))
                .target(Items.class, uri.resolve("/").toString());
    }

    @TearDown
    public void tearDown() throws Exception {
        okDirect.dispatcher().executorService().shutdown();
        okStagger.dispatcher().executorService().shutdown();
        apacheDirect.close();
        apacheStagger.close();
        asyncDirect.close(CloseMode.GRACEFUL);
        asyncStagger.close();
        server.stop();
    }

    @Benchmark
    public String jdk_direct() throws Exception {
        return jdk.send(jdkRequest, HttpResponse.BodyHandlers.ofString()).body();
    }

    @Benchmark
    public String jdk_stagger() throws Exception {
        return jdkStagger.send(jdkRequest, HttpResponse.BodyHandlers.ofString()).body();
    }

    @Benchmark
    public String okhttp_direct() throws IOException {
        return okCall(okDirect);
    }

    @Benchmark
    public String okhttp_stagger() throws IOException {
        return okCall(okStagger);
    }

    private String okCall(OkHttpClient client) throws IOException {
        try (Response response = client.newCall(new Request.Builder().url(uri.toString()).build()).execute()) {
            return response.body().string();
        }
    }

    @Benchmark
    public String apacheClassic_direct() throws IOException {
        return apacheDirect.execute(new HttpGet(uri), response -> EntityUtils.toString(response.getEntity()));
    }

    @Benchmark
    public String apacheClassic_stagger() throws IOException {
        return apacheStagger.execute(new HttpGet(uri), response -> EntityUtils.toString(response.getEntity()));
    }

    @Benchmark
    public String apacheAsync_direct() throws Exception {
        SimpleHttpRequest request = SimpleRequestBuilder.get(uri).build();
        return asyncDirect.execute(request, null).get().getBodyText();
    }

    @Benchmark
    public String apacheAsync_stagger() throws Exception {
        SimpleHttpRequest request = SimpleRequestBuilder.get(uri).build();
        return asyncStagger.execute(request).get().getBodyText();
    }

    @Benchmark
    public String feign_direct() {
        return feignDirect.items();
    }

    @Benchmark
    public String feign_stagger() {
        return feignStagger.items();
    }
}
