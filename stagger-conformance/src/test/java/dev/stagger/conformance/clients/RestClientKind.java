package dev.stagger.conformance.clients;

import dev.stagger.conformance.ClientKind;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.spring.internal.AttemptSpans;
import dev.stagger.spring.internal.RetryingRequestInterceptor;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.util.function.UnaryOperator;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/** Spring's {@code RestClient}, through the starter's request interceptor (over the JDK client). */
public final class RestClientKind extends ClientKind {
    @Override
    public String name() {
        return "RestClient";
    }

    @Override
    public boolean hedges() {
        return true;
    }

    @Override
    public Open open(VirtualClock clock, UnaryOperator<RetryingHttpClient.Builder> rules) {
        HttpClient jdk = Jdk.HTTP_11;
        RestClient rest = RestClient.builder()
                .requestFactory(new JdkClientHttpRequestFactory(jdk))
                .requestInterceptor(new RetryingRequestInterceptor(rules.apply(RetryingHttpClient.builder().clock(clock)).build(),
                        AttemptSpans.NONE))
                .build();
        return new Open() {
            @Override
            public Answer send(String method, URI uri, String body) {
                RestClient.RequestBodySpec spec = rest.method(HttpMethod.valueOf(method)).uri(uri);
                if (body != null) {
                    spec.body(body);
                }
                return spec.exchange((request, response) -> new Answer(response.getStatusCode().value(),
                        new String(response.getBody().readAllBytes(), StandardCharsets.UTF_8)));
            }
        };
    }
}
