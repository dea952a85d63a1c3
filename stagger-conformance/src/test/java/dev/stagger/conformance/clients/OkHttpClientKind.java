package dev.stagger.conformance.clients;

import dev.stagger.conformance.ClientKind;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.okhttp.RetryingInterceptor;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.util.function.UnaryOperator;
import okhttp3.ConnectionPool;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/** OkHttp 5, through {@link RetryingInterceptor}; its {@link ConnectionPool} counts connections in use. */
public final class OkHttpClientKind extends ClientKind {
    private static final MediaType TEXT = MediaType.get("text/plain; charset=utf-8");

    @Override
    public String name() {
        return "OkHttp";
    }

    @Override
    public boolean hedges() {
        return true;
    }

    @Override
    public Open open(VirtualClock clock, UnaryOperator<RetryingHttpClient.Builder> rules) {
        ConnectionPool pool = new ConnectionPool();
        OkHttpClient ok = RetryingInterceptor.of(rules.apply(RetryingHttpClient.builder().clock(clock)).build())
                .applyTo(new OkHttpClient.Builder().connectionPool(pool))
                .build();
        return new Open() {
            @Override
            public Answer send(String method, URI uri, String body) throws Exception {
                Request request = new Request.Builder().url(uri.toString())
                        .method(method, body == null ? null : RequestBody.create(body, TEXT))
                        .build();
                try (Response response = ok.newCall(request).execute()) {
                    return new Answer(response.code(), response.body().string());
                }
            }

            @Override
            public int connectionsInUse() {
                return pool.connectionCount() - pool.idleConnectionCount();
            }

            @Override
            public void close() {
                ok.dispatcher().executorService().shutdown();
                pool.evictAll();
            }
        };
    }
}
