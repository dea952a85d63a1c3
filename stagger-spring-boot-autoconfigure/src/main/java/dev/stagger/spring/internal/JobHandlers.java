package dev.stagger.spring.internal;

import dev.stagger.jobs.JobContext;
import dev.stagger.jobs.JobHandler;
import dev.stagger.spring.StaggerJobHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Finds the {@link StaggerJobHandler}s among the beans of a context: annotated methods taking one
 * {@link JobContext}, and annotated beans implementing {@link JobHandler}. A wrong signature, or
 * two handlers for one type of one queue, fails startup naming both places.
 */
public final class JobHandlers {
    private JobHandlers() {
    }

    /** One handler found: where it came from, for messages. */
    public record Found(String queue, String type, String retry, JobHandler handler, String source) {
    }

    public static List<Found> find(ConfigurableListableBeanFactory beans) {
        List<Found> found = new ArrayList<>();
        for (String name : beans.getBeanNamesForType(Object.class, false, false)) {
            Class<?> type = beans.getType(name, false);
            if (type == null) {
                continue;
            }
            Class<?> user = ClassUtils.getUserClass(type);
            StaggerJobHandler onType = AnnotatedElementUtils.findMergedAnnotation(user, StaggerJobHandler.class);
            Map<Method, StaggerJobHandler> methods = MethodIntrospector.selectMethods(user,
                    (MethodIntrospector.MetadataLookup<StaggerJobHandler>) m ->
                            AnnotatedElementUtils.findMergedAnnotation(m, StaggerJobHandler.class));
            if (onType == null && methods.isEmpty()) {
                continue;
            }
            Object bean = beans.getBean(name);
            if (onType != null) {
                if (!(bean instanceof JobHandler handler)) {
                    throw new IllegalStateException("@StaggerJobHandler on bean '" + name + "' (" + user.getName()
                            + "): a bean annotated on its type must implement dev.stagger.jobs.JobHandler");
                }
                found.add(new Found(onType.queue(), onType.type(), onType.retry(), handler, "bean '" + name + "'"));
            }
            methods.forEach((method, a) -> found.add(new Found(a.queue(), a.type(), a.retry(),
                    handler(bean, method), "bean '" + name + "' (" + user.getName() + "." + method.getName() + ")")));
        }
        return found;
    }

    private static JobHandler handler(Object bean, Method declared) {
        if (declared.getParameterCount() != 1 || declared.getParameterTypes()[0] != JobContext.class
                || !Modifier.isPublic(declared.getModifiers()) || Modifier.isStatic(declared.getModifiers())) {
            throw new IllegalStateException("@StaggerJobHandler on " + declared
                    + ": the method must be public, not static, and take one dev.stagger.jobs.JobContext");
        }
        Method method = AopUtils.selectInvocableMethod(declared, bean.getClass());
        ReflectionUtils.makeAccessible(method); // a public method of a class that is not public
        return context -> {
            try {
                method.invoke(bean, context);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Exception ex) {
                    throw ex;
                }
                throw (Error) cause;
            }
        };
    }
}
