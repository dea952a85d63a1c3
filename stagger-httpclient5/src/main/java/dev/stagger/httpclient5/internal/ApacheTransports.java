package dev.stagger.httpclient5.internal;

import dev.stagger.http.HttpTransport;
import java.util.Optional;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpMessage;
import org.apache.hc.core5.http.io.entity.EntityUtils;

/** Apache HttpClient's responses as the HTTP rules read and release them. */
public final class ApacheTransports {
    private ApacheTransports() {
    }

    /** The first value of header {@code name} of a request or response, if any. */
    public static Optional<String> firstHeader(HttpMessage message, String name) {
        Header header = message.getFirstHeader(name);
        return header == null ? Optional.empty() : Optional.ofNullable(header.getValue());
    }

    /**
     * Classic responses: a discarded one has its entity consumed (the connection goes back to the
     * pool) and is closed.
     */
    public static final HttpTransport<ClassicHttpResponse> CLASSIC = new HttpTransport<>() {
        @Override
        public int statusCode(ClassicHttpResponse response) {
            return response.getCode();
        }

        @Override
        public Optional<String> header(ClassicHttpResponse response, String name) {
            return firstHeader(response, name);
        }

        @Override
        public void discard(ClassicHttpResponse response) {
            EntityUtils.consumeQuietly(response.getEntity());
            try {
                response.close();
            } catch (java.io.IOException | RuntimeException ignored) {
                // thrown away either way
            }
        }
    };

    /** Async responses held in memory: their connection was released when they arrived. */
    public static final HttpTransport<SimpleHttpResponse> SIMPLE = new HttpTransport<>() {
        @Override
        public int statusCode(SimpleHttpResponse response) {
            return response.getCode();
        }

        @Override
        public Optional<String> header(SimpleHttpResponse response, String name) {
            return firstHeader(response, name);
        }

        @Override
        public void discard(SimpleHttpResponse response) {
            // nothing holds a connection
        }
    };
}
