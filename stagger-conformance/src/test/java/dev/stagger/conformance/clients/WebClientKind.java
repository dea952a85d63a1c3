package dev.stagger.conformance.clients;

import dev.stagger.conformance.ClientKind;
import dev.stagger.conformance.VirtualTime;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.spring.internal.AttemptSpans;
import dev.stagger.spring.internal.ReactiveHttp;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.util.function.UnaryOperator;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/** Spring's {@code WebClient}, through the starter's exchange filter (over the JDK client). */
public final class WebClientKind extends ClientKind {
    @Override
    public String name() {
        return "WebClient";
    }

    @Override
    public boolean hedges() {
        return true;
    }

    @Override
    public Open open(VirtualClock clock, UnaryOperator<RetryingHttpClient.Builder> rules) {
        HttpClient jdk = Jdk.HTTP_11;
        WebClient web = WebClient.builder()
                .clientConnector(new JdkClientHttpConnector(jdk))
                .filter(ReactiveHttp.filter(rules.apply(RetryingHttpClient.builder().clock(clock)).build(), AttemptSpans.NONE))
                .build();
        return new Open() {
            @Override
            public Answer send(String method, URI uri, String body) throws Exception {
                WebClient.RequestBodySpec spec = web.method(HttpMethod.valueOf(method)).uri(uri);
                WebClient.RequestHeadersSpec<?> ready = body == null ? spec : spec.bodyValue(body);
                return VirtualTime.drive(clock, ready.exchangeToMono(response -> response.bodyToMono(String.class)
                        .defaultIfEmpty("")
                        .map(text -> new Answer(response.statusCode().value(), text))).toFuture());
            }
        };
    }
}
