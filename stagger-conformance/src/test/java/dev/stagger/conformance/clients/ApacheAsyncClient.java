package dev.stagger.conformance.clients;

import dev.stagger.conformance.ClientKind;
import dev.stagger.conformance.VirtualTime;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.httpclient5.RetryingAsyncClient;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.util.function.UnaryOperator;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManager;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;

/** Apache HttpClient 5 async, through {@link RetryingAsyncClient}; its pool counts leased connections. */
public final class ApacheAsyncClient extends ClientKind {
    @Override
    public String name() {
        return "Apache HttpClient 5 async";
    }

    @Override
    public boolean hedges() {
        return true;
    }

    @Override
    public Open open(VirtualClock clock, UnaryOperator<RetryingHttpClient.Builder> rules) {
        PoolingAsyncClientConnectionManager pool = PoolingAsyncClientConnectionManagerBuilder.create().build();
        RetryingAsyncClient apache = RetryingAsyncClient.of(HttpAsyncClients.custom().setConnectionManager(pool),
                rules.apply(RetryingHttpClient.builder().clock(clock)).build());
        return new Open() {
            @Override
            public Answer send(String method, URI uri, String body) throws Exception {
                SimpleRequestBuilder request = SimpleRequestBuilder.create(method).setUri(uri);
                if (body != null) {
                    request.setBody(body, ContentType.TEXT_PLAIN);
                }
                SimpleHttpResponse response = VirtualTime.drive(clock, apache.execute(request.build()));
                return new Answer(response.getCode(), response.getBodyText() == null ? "" : response.getBodyText());
            }

            @Override
            public int connectionsInUse() {
                return pool.getTotalStats().getLeased();
            }

            @Override
            public void close() {
                apache.close();
            }
        };
    }
}
