package dev.stagger.shedding.support;

import jakarta.servlet.http.HttpServletRequest;
import java.lang.reflect.Proxy;
import java.util.Map;

/** An {@link HttpServletRequest} that only answers {@code getHeader}, for the markers' unit tests. */
public final class FakeRequest {
    private FakeRequest() {
    }

    public static HttpServletRequest withHeaders(Map<String, String> headers) {
        return (HttpServletRequest) Proxy.newProxyInstance(FakeRequest.class.getClassLoader(),
                new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getHeader")) {
                        return headers.get((String) args[0]);
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    public static HttpServletRequest withHeader(String name, String value) {
        return withHeaders(Map.of(name, value));
    }

    public static HttpServletRequest withoutHeaders() {
        return withHeaders(Map.of());
    }
}
