package dev.stagger.httpclient5.internal;

import dev.stagger.http.HttpTransport;
import java.util.Optional;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.protocol.HttpClientContext;
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
    public static final HttpTransport<ClassicHttpResponse> CLASSIC = new Classic(false);

    /**
     * The same, for hedged calls: each attempt runs on an execution runtime of its own, two in
     * flight at once, and a loser's late response is recognised as this transport's.
     */
    public static final HttpTransport<ClassicHttpResponse> CLASSIC_HEDGED = new Classic(true);

    private static final class Classic implements HttpTransport<ClassicHttpResponse> {
        private final boolean hedged;

        Classic(boolean hedged) {
            this.hedged = hedged;
        }

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

        @Override
        public boolean owns(Object response) {
            return hedged && response instanceof ClassicHttpResponse;
        }

        @Override
        public boolean concurrentAttempts() {
            return hedged;
        }
    }

    /**
     * A context for one attempt of a hedged call, which runs beside another: the call's
     * configuration, credentials, cookie store and auth cache (all thread-safe), without the
     * per-exchange state (redirects, auth exchanges) that two attempts must not share.
     */
    public static HttpClientContext attemptContext(HttpClientContext call) {
        HttpClientContext attempt = HttpClientContext.create();
        attempt.setRequestConfig(call.getRequestConfigOrDefault());
        attempt.setExchangeId(call.getExchangeId());
        if (call.getCookieStore() != null) {
            attempt.setCookieStore(call.getCookieStore());
        }
        if (call.getCookieSpecRegistry() != null) {
            attempt.setCookieSpecRegistry(call.getCookieSpecRegistry());
        }
        if (call.getAuthSchemeRegistry() != null) {
            attempt.setAuthSchemeRegistry(call.getAuthSchemeRegistry());
        }
        if (call.getCredentialsProvider() != null) {
            attempt.setCredentialsProvider(call.getCredentialsProvider());
        }
        if (call.getAuthCache() != null) {
            attempt.setAuthCache(call.getAuthCache());
        }
        if (call.getUserToken() != null) {
            attempt.setUserToken(call.getUserToken());
        }
        return attempt;
    }

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

        @Override
        public boolean owns(Object response) {
            return response instanceof SimpleHttpResponse;
        }

        /** Each attempt is an exchange of its own; a losing one's future is cancelled, which cancels the exchange. */
        @Override
        public boolean concurrentAttempts() {
            return true;
        }
    };
}
