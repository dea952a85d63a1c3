package dev.stagger.okhttp.internal;

import dev.stagger.http.HttpTransport;
import java.util.Optional;
import okhttp3.Response;

/** OkHttp's responses as the HTTP rules read and release them. */
public final class OkHttpTransport implements HttpTransport<Response> {
    /** The one instance: it holds no state. */
    public static final OkHttpTransport INSTANCE = new OkHttpTransport(false);

    /**
     * The same, for hedged calls: their attempts run as calls of their own, two in flight at once,
     * and a loser's late response is recognised as this transport's.
     */
    public static final OkHttpTransport HEDGED = new OkHttpTransport(true);

    private final boolean hedged;

    private OkHttpTransport(boolean hedged) {
        this.hedged = hedged;
    }

    @Override
    public boolean owns(Object response) {
        return hedged && response instanceof Response;
    }

    @Override
    public boolean concurrentAttempts() {
        return hedged;
    }

    @Override
    public int statusCode(Response response) {
        return response.code();
    }

    @Override
    public Optional<String> header(Response response, String name) {
        return Optional.ofNullable(response.header(name));
    }

    /** Closing drains a short body (the connection goes back to the pool) or drops the connection. */
    @Override
    public void discard(Response response) {
        try {
            response.close();
        } catch (RuntimeException ignored) {
            // thrown away either way
        }
    }
}
