package dev.stagger.http.internal;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLSession;

/** A response that has nothing but a status, for classification tables. */
record StatusOnly(int statusCode) implements HttpResponse<String> {
    private static final HttpRequest REQUEST = HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/")).build();

    @Override
    public HttpRequest request() {
        return REQUEST;
    }

    @Override
    public Optional<HttpResponse<String>> previousResponse() {
        return Optional.empty();
    }

    @Override
    public HttpHeaders headers() {
        return HttpHeaders.of(Map.of(), (k, v) -> true);
    }

    @Override
    public String body() {
        return "";
    }

    @Override
    public Optional<SSLSession> sslSession() {
        return Optional.empty();
    }

    @Override
    public URI uri() {
        return REQUEST.uri();
    }

    @Override
    public HttpClient.Version version() {
        return HttpClient.Version.HTTP_1_1;
    }
}
