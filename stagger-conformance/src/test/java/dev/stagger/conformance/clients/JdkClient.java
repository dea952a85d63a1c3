package dev.stagger.conformance.clients;

import dev.stagger.conformance.ClientKind;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.function.UnaryOperator;

/** {@code java.net.http}, through {@link RetryingHttpClient#send}. */
public final class JdkClient extends ClientKind {
    @Override
    public String name() {
        return "JDK HttpClient";
    }

    @Override
    public boolean hedges() {
        return true;
    }

    @Override
    public Open open(VirtualClock clock, UnaryOperator<RetryingHttpClient.Builder> rules) {
        HttpClient jdk = Jdk.HTTP_11;
        RetryingHttpClient http = rules.apply(RetryingHttpClient.builder(jdk).clock(clock)).build();
        return new Open() {
            @Override
            public Answer send(String method, URI uri, String body) throws Exception {
                HttpRequest request = HttpRequest.newBuilder(uri)
                        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                        .build();
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                return new Answer(response.statusCode(), response.body());
            }
        };
    }
}
