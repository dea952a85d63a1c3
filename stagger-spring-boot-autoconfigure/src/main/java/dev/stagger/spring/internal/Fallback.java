package dev.stagger.spring.internal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ReflectionUtils;

/**
 * A {@code fallbackMethod} of a {@code @StaggerRetry} method: found once, by name, among the
 * bean's methods with the same parameters (and optionally a last {@code Throwable} parameter) and
 * the same return type; invoked on the target object when the call fails for good.
 */
final class Fallback {
    private final @Nullable Method withoutFailure;
    private final List<Method> withFailure;

    private Fallback(@Nullable Method withoutFailure, List<Method> withFailure) {
        this.withoutFailure = withoutFailure;
        this.withFailure = withFailure;
    }

    static Fallback find(Class<?> targetClass, Method method, String name) {
        Class<?>[] params = method.getParameterTypes();
        Method plain = null;
        List<Method> typed = new ArrayList<>();
        for (Method candidate : ReflectionUtils.getUniqueDeclaredMethods(targetClass)) {
            if (!candidate.getName().equals(name) || !method.getReturnType().isAssignableFrom(candidate.getReturnType())) {
                continue;
            }
            Class<?>[] c = candidate.getParameterTypes();
            if (Arrays.equals(c, params)) {
                plain = candidate;
            } else if (c.length == params.length + 1 && Throwable.class.isAssignableFrom(c[params.length])
                    && Arrays.equals(Arrays.copyOf(c, params.length), params)) {
                typed.add(candidate);
            }
        }
        if (plain == null && typed.isEmpty()) {
            throw new IllegalStateException("@StaggerRetry on " + method + ": no fallback method " + name
                    + " with the same parameters (and optionally a last Throwable) returning "
                    + method.getReturnType().getSimpleName() + " in " + targetClass.getName());
        }
        // most specific failure type first
        typed.sort((a, b) -> {
            Class<?> ta = a.getParameterTypes()[params.length];
            Class<?> tb = b.getParameterTypes()[params.length];
            return ta == tb ? 0 : ta.isAssignableFrom(tb) ? 1 : tb.isAssignableFrom(ta) ? -1 : 0;
        });
        if (plain != null) {
            ReflectionUtils.makeAccessible(plain);
        }
        typed.forEach(ReflectionUtils::makeAccessible);
        return new Fallback(plain, List.copyOf(typed));
    }

    /** The fallback's answer for {@code failure}, or {@code failure} rethrown when no fallback takes it. */
    Object invoke(MethodInvocation invocation, Throwable failure) throws Throwable {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        Object[] args = invocation.getArguments();
        try {
            for (Method m : withFailure) {
                if (m.getParameterTypes()[args.length].isInstance(cause)) {
                    Object[] more = Arrays.copyOf(args, args.length + 1);
                    more[args.length] = cause;
                    return m.invoke(invocation.getThis(), more);
                }
            }
            if (withoutFailure != null) {
                return withoutFailure.invoke(invocation.getThis(), args);
            }
        } catch (InvocationTargetException e) {
            throw e.getTargetException();
        }
        throw cause;
    }

    @SuppressWarnings("unchecked")
    CompletableFuture<Object> onFailedStage(MethodInvocation invocation, CompletableFuture<Object> result) {
        return result.exceptionallyCompose(failure -> {
            try {
                Object answer = invoke(invocation, failure);
                return answer == null ? CompletableFuture.completedFuture(null) : (CompletionStage<Object>) answer;
            } catch (Throwable t) {
                return CompletableFuture.failedFuture(t);
            }
        });
    }
}
