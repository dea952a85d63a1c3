package dev.stagger.spring.internal;

import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.spring.StaggerRegistry;
import java.lang.reflect.Method;
import org.jspecify.annotations.Nullable;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.resilience.annotation.Retryable;
import org.springframework.resilience.retry.MethodRetryPredicate;

/**
 * Spring Framework 7's {@code @Retryable} run by Stagger ({@code stagger.spring-retry.annotations=true}):
 * the method's retry is a Stagger retry — {@code stagger.spring-retry.retry} when set, else
 * the one named {@code Class.method} (the {@code default} entry unless configured) — so its
 * policy, backoff and jitter, deadline, breaker and budget apply. The annotation's exception
 * types are kept ({@code value}/{@code includes} retried, {@code excludes} never); its numbers
 * ({@code maxRetries}, {@code delay}, {@code jitter}, {@code multiplier}, {@code maxDelay},
 * {@code timeout}) are not: they belong in {@code stagger.retries}. A custom {@code predicate}
 * is refused (Stagger combines {@code retry-on} types and predicates as "either", Spring as "both").
 */
public final class SpringRetryables {
    private final StaggerRegistry registry;
    private final @Nullable String retryName;

    /** @param retryName the Stagger retry every {@code @Retryable} uses; null: {@code Class.method} */
    public SpringRetryables(StaggerRegistry registry, @Nullable String retryName) {
        this.registry = registry;
        this.retryName = retryName;
    }

    /** The retry for {@code method}, or null when it has no {@code @Retryable}. */
    public @Nullable Retry retry(Method method, Class<?> targetClass, String defaultName) {
        Retryable annotation = AnnotatedElementUtils.findMergedAnnotation(method, Retryable.class);
        if (annotation == null) {
            annotation = AnnotatedElementUtils.findMergedAnnotation(targetClass, Retryable.class);
        }
        if (annotation == null) {
            return null;
        }
        if (annotation.predicate() != MethodRetryPredicate.class) {
            throw new IllegalStateException("@Retryable on " + method + ": a predicate is not carried over to Stagger; "
                    + "use stagger.retries.<name>.retry-on / abort-on, or @StaggerRetry with a classifier");
        }
        String name = retryName != null ? retryName : defaultName;
        Class<? extends Throwable>[] includes = concat(annotation.value(), annotation.includes());
        Class<? extends Throwable>[] excludes = annotation.excludes();
        if (includes.length == 0 && excludes.length == 0) {
            return registry.retry(name);
        }
        Retry base = registry.bareRetry(name);
        RetryPolicy.Builder policy = base.policy().toBuilder().retryOn(includes).abortOn(excludes);
        // the named retry's breaker, budget (or none), throttle, clock and nesting, with the annotation's exceptions
        return registry.customize(base.withPolicy(policy.build()));
    }

    @SuppressWarnings("unchecked")
    private static Class<? extends Throwable>[] concat(Class<? extends Throwable>[] a, Class<? extends Throwable>[] b) {
        Class<? extends Throwable>[] all = (Class<? extends Throwable>[]) new Class<?>[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
