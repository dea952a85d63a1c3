package dev.stagger.conformance.clients;

import dev.stagger.conformance.ClientKind;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.httpclient5.RetryingExecChainHandler;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.util.function.UnaryOperator;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.support.ClassicRequestBuilder;

/** Apache HttpClient 5 classic, through {@link RetryingExecChainHandler}; its pool counts leased connections. */
public final class ApacheClassicClient extends ClientKind {
    @Override
    public String name() {
        return "Apache HttpClient 5 classic";
    }

    @Override
    public boolean hedges() {
        return true;
    }

    @Override
    public Open open(VirtualClock clock, UnaryOperator<RetryingHttpClient.Builder> rules) {
        PoolingHttpClientConnectionManager pool = PoolingHttpClientConnectionManagerBuilder.create().build();
        CloseableHttpClient apache = RetryingExecChainHandler.of(rules.apply(RetryingHttpClient.builder().clock(clock)).build())
                .applyTo(HttpClients.custom().setConnectionManager(pool))
                .build();
        return new Open() {
            @Override
            public Answer send(String method, URI uri, String body) throws Exception {
                ClassicRequestBuilder request = ClassicRequestBuilder.create(method).setUri(uri);
                if (body != null) {
                    request.setEntity(body, ContentType.TEXT_PLAIN);
                }
                ClassicHttpRequest built = request.build();
                return apache.execute(built, response -> new Answer(response.getCode(),
                        response.getEntity() == null ? "" : EntityUtils.toString(response.getEntity())));
            }

            @Override
            public int connectionsInUse() {
                return pool.getTotalStats().getLeased();
            }

            @Override
            public void close() throws Exception {
                apache.close();
            }
        };
    }
}
