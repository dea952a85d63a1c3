package dev.stagger.conformance.clients;

import dev.stagger.conformance.ClientKind;
import dev.stagger.feign.RetryingCapability;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.testing.VirtualClock;
import feign.Client;
import feign.Feign;
import feign.FeignException;
import feign.Param;
import feign.RequestLine;
import java.net.URI;
import java.util.function.UnaryOperator;

/**
 * OpenFeign with its default client ({@code HttpURLConnection}), through {@link RetryingCapability};
 * a status Feign turns into an exception is read back from that exception.
 */
public final class FeignClient extends ClientKind {

    /** The suite's requests as a Feign interface. */
    interface Api {
        @RequestLine("GET /{path}")
        String get(@Param("path") String path);

        @RequestLine("POST /{path}")
        String post(@Param("path") String path, String body);

        @RequestLine("PUT /{path}")
        String put(@Param("path") String path, String body);
    }

    @Override
    public String name() {
        return "OpenFeign";
    }

    @Override
    public Open open(VirtualClock clock, UnaryOperator<RetryingHttpClient.Builder> rules) {
        RetryingHttpClient stagger = rules.apply(RetryingHttpClient.builder().clock(clock)).build();
        return new Open() {
            private Api api;
            private URI base;

            @Override
            public Answer send(String method, URI uri, String body) {
                URI root = uri.resolve("/");
                if (!root.equals(base)) {
                    base = root;
                    api = Feign.builder().client(new Client.Default(null, null))
                            .addCapability(RetryingCapability.of(stagger))
                            .target(Api.class, root.toString());
                }
                String path = uri.getPath().substring(1);
                try {
                    String answer = switch (method) {
                        case "GET" -> api.get(path);
                        case "POST" -> api.post(path, body == null ? "" : body);
                        case "PUT" -> api.put(path, body == null ? "" : body);
                        default -> throw new IllegalArgumentException("method not in the Feign interface: " + method);
                    };
                    return new Answer(200, answer);
                } catch (FeignException e) {
                    if (e.status() <= 0) {
                        throw e; // a transport failure, not a status
                    }
                    return new Answer(e.status(), e.contentUTF8());
                }
            }
        };
    }
}
