package dev.stagger.idempotency.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The connection of a request's transaction as the handler sees it: every call goes to the real
 * connection except those that would end the transaction or hand the connection back early.
 * {@code close()} does nothing (so try-with-resources is harmless); {@code commit},
 * {@code rollback}, {@code setAutoCommit} and {@code abort} throw: the filter ends the
 * transaction once the response is stored.
 */
public final class GuardedConnection implements InvocationHandler {
    private static final Set<String> FORBIDDEN = Set.of("commit", "rollback", "setAutoCommit", "abort");

    private final Connection target;

    private GuardedConnection(Connection target) {
        this.target = target;
    }

    public static Connection of(Connection target) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                new GuardedConnection(target));
    }

    @Override
    public @Nullable Object invoke(Object proxy, Method method, Object @Nullable [] args) throws Throwable {
        String name = method.getName();
        if ("close".equals(name) && method.getParameterCount() == 0) {
            return null;
        }
        if ("isClosed".equals(name) && method.getParameterCount() == 0) {
            return target.isClosed();
        }
        if (FORBIDDEN.contains(name) && !(("rollback".equals(name)) && method.getParameterCount() == 1)) {
            throw new IllegalStateException(name + " is not allowed on the request's transaction connection: the"
                    + " idempotency filter commits the handler's writes with the stored response, or rolls both back");
        }
        if ("equals".equals(name) && method.getParameterCount() == 1) {
            return proxy == Objects.requireNonNull(args, "args")[0]; // one parameter: one argument
        }
        if ("hashCode".equals(name) && method.getParameterCount() == 0) {
            return System.identityHashCode(proxy);
        }
        if ("toString".equals(name) && method.getParameterCount() == 0) {
            return "GuardedConnection{" + target + "}";
        }
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
