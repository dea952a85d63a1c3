package dev.stagger.spring.internal;

import dev.stagger.spring.StaggerProperties;
import dev.stagger.spring.StaggerRetry;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Refuses, when a bean is created, a {@code @StaggerRetry("name")} whose name is configured
 * nowhere: not under {@code stagger.retries}, nor as a breaker, budget, throttle, hedge or bulkhead
 * of that name (which a retry of the name would use), and a {@code hedge} or {@code bulkhead}
 * attribute naming no entry of {@code stagger.hedges} or {@code stagger.bulkheads}. A misspelt name would otherwise run under
 * {@code stagger.retries.default} without a word. The message names the closest configured name.
 * {@code stagger.annotation.allow-unconfigured-names=true} allows such names. A
 * {@code @StaggerRetry} without a name ({@code Class.method}) is never refused.
 */
public final class RetryNameCheck implements BeanPostProcessor {
    /** The property allowing names that are not configured. */
    public static final String PROPERTY = "stagger.annotation.allow-unconfigured-names";
    private static final String[] PREFIXES = {"stagger.retries", "stagger.circuit-breakers", "stagger.budgets", "stagger.throttles",
        "stagger.hedges", "stagger.bulkheads"};

    private final Environment environment;
    private final Set<Class<?>> checked = ConcurrentHashMap.newKeySet();
    private volatile @Nullable Set<String> configured;

    public RetryNameCheck(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Object postProcessBeforeInitialization(Object bean, String beanName) {
        Class<?> type = ClassUtils.getUserClass(bean);
        if (checked.contains(type) || !AnnotationUtils.isCandidateClass(type, StaggerRetry.class)
                || environment.getProperty(PROPERTY, Boolean.class, false)) {
            return bean;
        }
        List<String> refused = new ArrayList<>();
        StaggerRetry onType = AnnotatedElementUtils.findMergedAnnotation(type, StaggerRetry.class);
        if (onType != null) {
            check(onType.name(), type.getSimpleName(), refused);
            checkHedge(onType.hedge(), type.getSimpleName(), refused);
            checkBulkhead(onType.bulkhead(), type.getSimpleName(), refused);
        }
        ReflectionUtils.doWithMethods(type, method -> {
            StaggerRetry onMethod = AnnotatedElementUtils.findMergedAnnotation(method, StaggerRetry.class);
            if (onMethod != null) {
                check(onMethod.name(), describe(method), refused);
                checkHedge(onMethod.hedge(), describe(method), refused);
                checkBulkhead(onMethod.bulkhead(), describe(method), refused);
            }
        }, method -> !method.isBridge() && !method.isSynthetic() && method.getDeclaringClass() != Object.class);
        if (!refused.isEmpty()) {
            throw new IllegalStateException(String.join("; ", refused) + ". Fix the name or configure it under "
                    + "stagger.retries; to run unconfigured names under stagger.retries.default, set " + PROPERTY + "=true");
        }
        checked.add(type);
        return bean;
    }

    private void check(String name, String where, List<String> refused) {
        if (name.isEmpty()) {
            return;
        }
        Set<String> names = configured();
        if (names.contains(name)) {
            return;
        }
        String closest = closest(name, names);
        String message = "@StaggerRetry(\"" + PropertyCheck.echo(name) + "\") on " + where + " names no configured retry";
        if (closest != null) {
            message += " (closest configured name: '" + closest + "')";
        }
        if (!refused.contains(message)) {
            refused.add(message);
        }
    }

    private void checkHedge(String hedge, String where, List<String> refused) {
        checkAttribute("hedge", "stagger.hedges", hedge, where, refused);
    }

    private void checkBulkhead(String bulkhead, String where, List<String> refused) {
        checkAttribute("bulkhead", "stagger.bulkheads", bulkhead, where, refused);
    }

    /** Refuses attribute {@code attribute} of a {@code @StaggerRetry} naming no entry of the map at {@code prefix}. */
    private void checkAttribute(String attribute, String prefix, String value, String where, List<String> refused) {
        if (value.isEmpty()) {
            return;
        }
        Set<String> names = new TreeSet<>(Binder.get(environment).bind(prefix,
                Bindable.mapOf(String.class, Object.class)).orElse(Map.of()).keySet());
        names.remove(StaggerProperties.DEFAULT);
        if (!names.contains(value)) {
            String closest = closest(value, names);
            String message = "@StaggerRetry(" + attribute + " = \"" + PropertyCheck.echo(value) + "\") on " + where
                    + " names no " + attribute + " under " + prefix + (closest != null ? " (closest: '" + closest + "')" : "");
            if (!refused.contains(message)) {
                refused.add(message);
            }
        }
    }

    private Set<String> configured() {
        Set<String> names = configured;
        if (names == null) {
            Binder binder = Binder.get(environment);
            names = new TreeSet<>();
            for (String prefix : PREFIXES) {
                names.addAll(binder.bind(prefix, Bindable.mapOf(String.class, Object.class))
                        .orElse(Map.of()).keySet());
            }
            names.remove(StaggerProperties.DEFAULT);
            configured = names;
        }
        return names;
    }

    /** The configured name nearest to {@code name} by edit distance (null when none is configured). */
    static @Nullable String closest(String name, Set<String> names) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : names) {
            int d = distance(name, candidate);
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return best;
    }

    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "()";
    }
}
