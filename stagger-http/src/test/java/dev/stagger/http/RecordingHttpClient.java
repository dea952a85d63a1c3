package dev.stagger.http;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/** The real JDK client, remembering the timeout of every request it was asked to send. */
final class RecordingHttpClient extends HttpClient {
    private final HttpClient real = HttpTesting.JDK_CLIENT;
    private final List<Optional<Duration>> timeouts = new CopyOnWriteArrayList<>();

    List<Optional<Duration>> timeouts() {
        return List.copyOf(timeouts);
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        timeouts.add(request.timeout());
        return real.send(request, handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        timeouts.add(request.timeout());
        return real.sendAsync(request, handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
                                                            HttpResponse.PushPromiseHandler<T> push) {
        timeouts.add(request.timeout());
        return real.sendAsync(request, handler, push);
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
        return real.cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return real.connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
        return real.followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
        return real.proxy();
    }

    @Override
    public SSLContext sslContext() {
        return real.sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
        return real.sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
        return real.authenticator();
    }

    @Override
    public Version version() {
        return real.version();
    }

    @Override
    public Optional<Executor> executor() {
        return real.executor();
    }
}
