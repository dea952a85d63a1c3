package dev.stagger.shedding.support;

import dev.stagger.testing.VirtualClock;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Requests through a filter on a {@link VirtualClock}, without a server or a thread: each admitted
 * request goes async in the handler and completes when the clock reaches its end, as a long poll,
 * an upload or any request of a servlet container would. Nothing sleeps; time moves only with the
 * clock. Not thread-safe: one test thread drives it.
 */
public final class VirtualServer {
    private final Filter filter;
    private final VirtualClock clock;

    public VirtualServer(Filter filter, VirtualClock clock) {
        this.filter = filter;
        this.clock = clock;
    }

    /**
     * Sends a request that takes {@code length} once admitted, then runs {@code onEnd}.
     *
     * @return true if it was admitted, false if it was shed (answered with a 503 or 429)
     */
    public boolean send(Duration length, Runnable onEnd) {
        Exchange exchange = new Exchange();
        try {
            filter.doFilter(exchange.request(), exchange.response(), (req, res) -> exchange.asyncStarted = true);
        } catch (Exception e) {
            throw new AssertionError("the filter failed", e);
        }
        if (exchange.status == 503 || exchange.status == 429) {
            return false;
        }
        clock.schedule(() -> {
            for (AsyncListener listener : exchange.listeners) {
                try {
                    listener.onComplete(null);
                } catch (Exception e) {
                    throw new AssertionError("an async listener failed", e);
                }
            }
            onEnd.run();
        }, length.toNanos());
        return true;
    }

    /** One request and its response; only what the filter and an async handler use is answered. */
    private static final class Exchange {
        final Map<String, Object> attributes = new HashMap<>();
        final List<AsyncListener> listeners = new ArrayList<>();
        boolean asyncStarted;
        int status = 200;

        HttpServletRequest request() {
            AsyncContext async = (AsyncContext) Proxy.newProxyInstance(VirtualServer.class.getClassLoader(),
                    new Class<?>[] {AsyncContext.class}, (proxy, method, args) -> {
                        if (method.getName().equals("addListener") && args.length == 1) {
                            listeners.add((AsyncListener) args[0]);
                            return null;
                        }
                        throw new UnsupportedOperationException(method.getName());
                    });
            return (HttpServletRequest) Proxy.newProxyInstance(VirtualServer.class.getClassLoader(),
                    new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> {
                        switch (method.getName()) {
                            case "getHeader":
                                return null;
                            case "getAttribute":
                                return attributes.get((String) args[0]);
                            case "setAttribute":
                                attributes.put((String) args[0], args[1]);
                                return null;
                            case "isAsyncStarted":
                                return asyncStarted;
                            case "getAsyncContext":
                                return async;
                            default:
                                throw new UnsupportedOperationException(method.getName());
                        }
                    });
        }

        HttpServletResponse response() {
            ServletOutputStream discard = new ServletOutputStream() {
                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setWriteListener(WriteListener writeListener) {
                    throw new UnsupportedOperationException("setWriteListener");
                }

                @Override
                public void write(int b) {
                    // a shed response's body: not needed
                }
            };
            return (HttpServletResponse) Proxy.newProxyInstance(VirtualServer.class.getClassLoader(),
                    new Class<?>[] {HttpServletResponse.class}, (proxy, method, args) -> {
                        switch (method.getName()) {
                            case "setStatus":
                                status = (Integer) args[0];
                                return null;
                            case "getOutputStream":
                                return discard;
                            case "setHeader":
                            case "setContentType":
                            case "setContentLength":
                                return null;
                            default:
                                throw new UnsupportedOperationException(method.getName());
                        }
                    });
        }
    }
}
