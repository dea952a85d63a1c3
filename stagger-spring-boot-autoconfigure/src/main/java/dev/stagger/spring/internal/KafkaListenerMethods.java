package dev.stagger.spring.internal;

import dev.stagger.kafka.KafkaHandler;
import dev.stagger.kafka.KafkaMessage;
import dev.stagger.spring.StaggerKafkaListener;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.ReflectionUtils;

/**
 * Finds the {@link StaggerKafkaListener} methods of the beans as they are initialised and makes
 * each a {@link KafkaHandler} of its consumer; {@code StaggerKafkaAutoConfiguration} builds the
 * consumers from them once every singleton exists. A bad signature, or a second method for one
 * consumer, fails the bean's creation naming the method. Methods of a proxied bean are called
 * through the proxy (its transaction or other advice applies).
 */
public final class KafkaListenerMethods implements BeanPostProcessor, EnvironmentAware {
    private static final String SUPPORTED = "one parameter: the value (byte[] or String), a ConsumerRecord"
            + " (key and value byte[] or String) or a KafkaMessage, and void";
    private final Map<String, Listener> listeners = new LinkedHashMap<>();
    private volatile @Nullable Environment environment;

    /**
     * The handler of a consumer from a {@link StaggerKafkaListener} method.
     *
     * @param method the method, as startup errors name it
     * @param topic the work topic the annotation names, or null
     * @param handler calls the method
     */
    public record Listener(String method, @Nullable String topic, KafkaHandler handler) {
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    /** The listener methods found so far, by consumer name, in the order found. */
    public synchronized Map<String, Listener> listeners() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(listeners));
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (!AnnotationUtils.isCandidateClass(type, StaggerKafkaListener.class)) {
            return bean;
        }
        Map<Method, StaggerKafkaListener> methods = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<StaggerKafkaListener>) m ->
                        AnnotatedElementUtils.findMergedAnnotation(m, StaggerKafkaListener.class));
        methods.forEach((method, annotation) -> register(bean, beanName, method, annotation));
        return bean;
    }

    private synchronized void register(Object bean, String beanName, Method method, StaggerKafkaListener annotation) {
        String described = "@StaggerKafkaListener method " + method.getDeclaringClass().getName() + "." + method.getName()
                + " (bean '" + beanName + "')";
        String topic = resolve(annotation.topic());
        String consumer = resolve(annotation.consumer());
        if (consumer.isEmpty()) {
            consumer = topic;
        }
        if (consumer.isEmpty()) {
            throw new BeanInitializationException(described + " names no consumer: set consumer or topic");
        }
        Function<KafkaMessage, Object> argument = argument(method, described);
        if (Modifier.isStatic(method.getModifiers())) {
            throw new BeanInitializationException(described + " is static; it must be an instance method");
        }
        Listener before = listeners.get(consumer);
        if (before != null) {
            throw new BeanInitializationException("two @StaggerKafkaListener methods for consumer '" + consumer + "': "
                    + before.method() + " and " + described);
        }
        Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
        ReflectionUtils.makeAccessible(invocable);
        listeners.put(consumer, new Listener(described, topic.isEmpty() ? null : topic, message -> {
            try {
                invocable.invoke(bean, argument.apply(message));
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Exception x) {
                    throw x;
                }
                if (cause instanceof Error error) {
                    throw error;
                }
                throw e;
            }
        }));
    }

    private String resolve(String value) {
        return environment == null ? value : environment.resolveRequiredPlaceholders(value);
    }

    /** What the method takes, from a message; a signature that is not supported fails naming it. */
    private static Function<KafkaMessage, Object> argument(Method method, String described) {
        if (method.getParameterCount() != 1 || method.getReturnType() != void.class) {
            throw new BeanInitializationException(described + " must take " + SUPPORTED + "; it is " + method.toGenericString());
        }
        Class<?> type = method.getParameterTypes()[0];
        if (type == KafkaMessage.class) {
            return m -> m;
        }
        Optional<Function<byte @Nullable [], @Nullable Object>> value = bytesAs(type);
        if (value.isPresent()) {
            return m -> value.get().apply(m.value());
        }
        if (type == ConsumerRecord.class) {
            ResolvableType record = ResolvableType.forMethodParameter(method, 0);
            Optional<Function<byte @Nullable [], @Nullable Object>> key = generic(record, 0);
            Optional<Function<byte @Nullable [], @Nullable Object>> payload = generic(record, 1);
            if (key.isPresent() && payload.isPresent()) {
                return m -> new ConsumerRecord<>(m.topic(), m.partition(), m.offset(), RecordBatch.NO_TIMESTAMP,
                        TimestampType.NO_TIMESTAMP_TYPE, -1, -1, key.get().apply(m.key()), payload.get().apply(m.value()),
                        m.headers(), Optional.empty());
            }
        }
        throw new BeanInitializationException(described + " must take " + SUPPORTED + "; it is " + method.toGenericString());
    }

    /** A ConsumerRecord's key (0) or value (1) type: byte[] when not given (raw, or a wildcard). */
    private static Optional<Function<byte @Nullable [], @Nullable Object>> generic(ResolvableType record, int index) {
        Class<?> type = record.getGeneric(index).resolve(byte[].class);
        return bytesAs(type == Object.class ? byte[].class : type);
    }

    private static Optional<Function<byte @Nullable [], @Nullable Object>> bytesAs(Class<?> type) {
        if (type == byte[].class) {
            return Optional.of(b -> b);
        }
        if (type == String.class) {
            return Optional.of(b -> b == null ? null : new String(b, StandardCharsets.UTF_8));
        }
        return Optional.empty();
    }
}
