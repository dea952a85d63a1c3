package dev.stagger.conformance.clients;

import dev.stagger.conformance.ClientKind;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.spring.internal.AttemptSpans;
import dev.stagger.spring.internal.RetryingRequestInterceptor;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.UnaryOperator;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.ResponseErrorHandler;
import org.springframework.web.client.RestTemplate;

/** Spring's {@code RestTemplate}, through the starter's request interceptor (over the JDK client). */
public final class RestTemplateKind extends ClientKind {
    @Override
    public String name() {
        return "RestTemplate";
    }

    @Override
    public boolean hedges() {
        return true;
    }

    @Override
    public Open open(VirtualClock clock, UnaryOperator<RetryingHttpClient.Builder> rules) {
        HttpClient jdk = Jdk.HTTP_11;
        RestTemplate template = new RestTemplate(new JdkClientHttpRequestFactory(jdk));
        template.setErrorHandler(new ResponseErrorHandler() {
            @Override
            public boolean hasError(ClientHttpResponse response) {
                return false; // the suite reads every status itself
            }
        });
        template.setInterceptors(List.of(new RetryingRequestInterceptor(
                rules.apply(RetryingHttpClient.builder().clock(clock)).build(), AttemptSpans.NONE)));
        return new Open() {
            @Override
            public Answer send(String method, URI uri, String body) {
                return template.execute(uri, HttpMethod.valueOf(method), request -> {
                    if (body != null) {
                        request.getBody().write(body.getBytes(StandardCharsets.UTF_8));
                    }
                }, response -> new Answer(response.getStatusCode().value(),
                        new String(response.getBody().readAllBytes(), StandardCharsets.UTF_8)));
            }
        };
    }
}
