package dev.stagger.spring.internal;

import dev.stagger.Retry;
import dev.stagger.spring.StaggerRegistry;
import dev.stagger.spring.StaggerRetry;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * The advice behind {@link StaggerRetry}: finds the method's retry once, then runs each call
 * through {@link Retry#call} or {@link Retry#callAsync} (the one engine), re-invoking the method
 * through a clone of the invocation for each attempt.
 */
public final class RetryInterceptor implements MethodInterceptor {
    private static final boolean REACTOR = ClassUtils.isPresent("reactor.core.publisher.Mono",
            RetryInterceptor.class.getClassLoader());

    private final StaggerRegistry registry;
    private final @Nullable SpringRetryables springRetryables;
    private final InsideTransaction insideTransaction;
    private final Map<Method, Plan> plans = new ConcurrentHashMap<>();

    public RetryInterceptor(StaggerRegistry registry) {
        this(registry, null);
    }

    /** @param springRetryables also runs Spring's {@code @Retryable} methods (null: only {@code @StaggerRetry}) */
    public RetryInterceptor(StaggerRegistry registry, @Nullable SpringRetryables springRetryables) {
        this(registry, springRetryables, InsideTransaction.of(InsideTransaction.Mode.FAIL));
    }

    /** @param insideTransaction what a call made inside a running transaction does (see {@link InsideTransaction}) */
    public RetryInterceptor(StaggerRegistry registry, @Nullable SpringRetryables springRetryables,
                            InsideTransaction insideTransaction) {
        this.registry = registry;
        this.springRetryables = springRetryables;
        this.insideTransaction = insideTransaction;
    }

    enum Kind { SYNC, STAGE, MONO, FLUX }

    /** What is decided once per method: the retry, the kind of return, the fallback, the annotated method. */
    record Plan(Retry retry, Kind kind, @Nullable Fallback fallback, Method specific) {
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Plan plan = plans.get(invocation.getMethod());
        if (plan == null) {
            plan = plans.computeIfAbsent(invocation.getMethod(), m -> plan(invocation));
        }
        if (!(invocation instanceof ProxyMethodInvocation proxied)) {
            throw new IllegalStateException("@StaggerRetry needs a Spring AOP proxy invocation");
        }
        Retry retry = plan.retry;
        switch (plan.kind) {
            case STAGE: {
                CompletableFuture<Object> result = retry.callAsync(() -> stage(proxied));
                return plan.fallback == null ? result : plan.fallback.onFailedStage(invocation, result);
            }
            case MONO:
                return ReactorRetries.mono(retry, proxied.invocableClone().proceed(), plan.fallback, invocation);
            case FLUX:
                return ReactorRetries.flux(retry, proxied.invocableClone().proceed(), plan.fallback, invocation);
            default:
                // a blocking call joining a running transaction: the rule of InsideTransaction
                boolean once = insideTransaction.runOnce(plan.specific, retry.name());
                try {
                    return once ? proceed(proxied) : retry.call(() -> proceed(proxied));
                } catch (Throwable failure) {
                    if (plan.fallback == null) {
                        throw failure;
                    }
                    return plan.fallback.invoke(invocation, failure);
                }
        }
    }

    @SuppressWarnings("unchecked")
    private static CompletionStage<Object> stage(ProxyMethodInvocation proxied) {
        Object value;
        try {
            value = proxied.invocableClone().proceed();
        } catch (Throwable t) {
            return CompletableFuture.failedFuture(t);
        }
        if (value == null) {
            return CompletableFuture.failedFuture(new NullPointerException("the method returned a null CompletionStage"));
        }
        return (CompletionStage<Object>) value;
    }

    private static @Nullable Object proceed(ProxyMethodInvocation proxied) throws Exception {
        try {
            return proxied.invocableClone().proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable other) {
            throw new IllegalStateException(other);
        }
    }

    private Plan plan(MethodInvocation invocation) {
        Method method = invocation.getMethod();
        Class<?> targetClass = invocation.getThis() != null ? AopUtils.getTargetClass(invocation.getThis())
                : method.getDeclaringClass();
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        StaggerRetry annotation = AnnotatedElementUtils.findMergedAnnotation(specific, StaggerRetry.class);
        if (annotation == null) {
            annotation = AnnotatedElementUtils.findMergedAnnotation(targetClass, StaggerRetry.class);
        }
        String defaultName = targetClass.getSimpleName() + "." + method.getName();
        if (springRetryables != null) { // the advice of Spring's @Retryable: that annotation only
            if (annotation != null) {
                throw new IllegalStateException("both @StaggerRetry and Spring's @Retryable on " + specific
                        + ": each would retry the other's attempts; keep one");
            }
            Retry spring = springRetryables.retry(specific, targetClass, defaultName);
            if (spring == null) {
                throw new IllegalStateException("no @Retryable on " + specific);
            }
            return new Plan(spring, kind(method, specific), null, specific);
        }
        if (annotation == null) {
            throw new IllegalStateException("no @StaggerRetry on " + specific);
        }
        String name = annotation.name().isEmpty() ? defaultName : annotation.name();
        Fallback fallback = annotation.fallbackMethod().isEmpty() ? null
                : Fallback.find(targetClass, specific, annotation.fallbackMethod());
        Retry retry = registry.retry(name);
        if (!annotation.hedge().isEmpty()) {
            // one Retry per method: the hedge's recent latencies are this method's
            try {
                retry = retry.withPolicy(retry.policy().toBuilder().hedge(registry.hedge(annotation.hedge())).build());
            } catch (IllegalArgumentException e) { // an unknown name, or a policy of one attempt
                throw new IllegalStateException("@StaggerRetry(hedge = \"" + annotation.hedge() + "\") on " + specific
                        + ": " + e.getMessage(), e);
            }
        }
        if (!annotation.bulkhead().isEmpty()) {
            try {
                retry = retry.withBulkhead(registry.bulkhead(annotation.bulkhead()));
            } catch (IllegalArgumentException e) { // an unknown name, or a hedged retry
                throw new IllegalStateException("@StaggerRetry(bulkhead = \"" + annotation.bulkhead() + "\") on " + specific
                        + ": " + e.getMessage(), e);
            }
        }
        return new Plan(retry, kind(method, specific), fallback, specific);
    }

    private static Kind kind(Method method, Method specific) {
        Class<?> type = method.getReturnType();
        Kind kind;
        if (CompletionStage.class.isAssignableFrom(type)) {
            if (!type.isAssignableFrom(CompletableFuture.class)) {
                throw new IllegalStateException("@StaggerRetry on " + specific + ": an asynchronous method must return "
                        + "CompletionStage or CompletableFuture, not " + type.getName());
            }
            kind = Kind.STAGE;
        } else if (Future.class.isAssignableFrom(type)) {
            throw new IllegalStateException("@StaggerRetry on " + specific + ": a Future that is not a CompletionStage "
                    + "cannot be retried without blocking; return CompletableFuture");
        } else if (REACTOR && ReactorRetries.isMono(type)) {
            kind = Kind.MONO;
        } else if (REACTOR && ReactorRetries.isFlux(type)) {
            kind = Kind.FLUX;
        } else {
            kind = Kind.SYNC;
        }
        return kind;
    }
}
