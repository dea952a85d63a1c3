package dev.stagger.idempotency.support;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Builds requests for the tests; plain {@link HttpClient}, HTTP/1.1. */
public final class Http {
    public static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private Http() {
    }

    /** A JSON POST; {@code key} and {@code user} are left out when null. */
    public static HttpRequest post(URI uri, String key, String user, String json) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        if (user != null) {
            b.header(TestServer.USER_HEADER, user);
        }
        return b.build();
    }

    public static HttpResponse<byte[]> send(HttpRequest request) throws Exception {
        return CLIENT.send(request, HttpResponse.BodyHandlers.ofByteArray());
    }
}
