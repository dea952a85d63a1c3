package dev.stagger.conformance;

import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.conformance.clients.ApacheClassicClient;
import dev.stagger.conformance.clients.OkHttpClientKind;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.okhttp.RetryingInterceptor;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * The negative control of the suite's connection checks: a response nobody closes does show, in the
 * client's pool and at the server, so a client that leaked retried responses would fail the suite.
 */
class ConnectionCheckTest {
    private static final String LARGE = "x".repeat(256 * 1024);

    @Test
    void anUnclosedOkHttpResponseShowsAsAConnectionInUse() throws Exception {
        try (FaultServer server = new FaultServer()) {
            server.then(status(200, LARGE));
            ConnectionPool pool = new ConnectionPool();
            OkHttpClient ok = RetryingInterceptor.of(RetryingHttpClient.builder().clock(new VirtualClock()).build())
                    .applyTo(new OkHttpClient.Builder().connectionPool(pool)).build();

            Response leaked = ok.newCall(new Request.Builder().url(server.uri("/items").toString()).build()).execute();

            assertThat(pool.connectionCount() - pool.idleConnectionCount()).isEqualTo(1);
            assertThat(server.openConnections()).isEqualTo(1);
            leaked.close();
            assertThat(pool.connectionCount() - pool.idleConnectionCount()).isZero();
            ok.dispatcher().executorService().shutdown();
            pool.evictAll();
        }
    }

    @Test
    void theSuiteReadsEachPoolThatCanBeRead() throws Exception {
        try (FaultServer server = new FaultServer();
             ClientUnderTest.Open okhttp = new OkHttpClientKind().open(new VirtualClock(), b -> b);
             ClientUnderTest.Open apache = new ApacheClassicClient().open(new VirtualClock(), b -> b)) {
            assertThat(okhttp.send("GET", server.uri("/items"), null).status()).isEqualTo(200);
            assertThat(apache.send("GET", server.uri("/items"), null).status()).isEqualTo(200);

            assertThat(okhttp.connectionsInUse()).isZero();
            assertThat(apache.connectionsInUse()).isZero();
            assertThat(server.openConnections()).as("one idle keep-alive connection per client").isEqualTo(2);
        }
    }
}
