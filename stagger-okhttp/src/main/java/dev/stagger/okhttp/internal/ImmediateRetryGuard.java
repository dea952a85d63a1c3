package dev.stagger.okhttp.internal;

import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * A network interceptor that removes {@code Retry-After: 0} from a 503, which OkHttp's follow-up
 * logic would otherwise take as an order to send the request again at once, below the retry
 * layer, outside its budget and deadline, whatever the method. Stagger's rules read a zero hint
 * as no hint, so their decision is the same without it.
 */
public final class ImmediateRetryGuard implements Interceptor {
    /** The one instance: it holds no state. */
    public static final ImmediateRetryGuard INSTANCE = new ImmediateRetryGuard();

    private ImmediateRetryGuard() {
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
        Response response = chain.proceed(chain.request());
        String retryAfter = response.header("Retry-After");
        if (response.code() == 503 && retryAfter != null && retryAfter.trim().matches("0+")) {
            return response.newBuilder().removeHeader("Retry-After").build();
        }
        return response;
    }

    @Override
    public String toString() {
        return "ImmediateRetryGuard";
    }
}
