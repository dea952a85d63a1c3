package dev.stagger.spring;

import dev.stagger.kafka.KafkaHandler;
import dev.stagger.kafka.KafkaRetryConsumer;
import dev.stagger.kafka.RecordListener;
import dev.stagger.spring.StaggerKafkaProperties.Consumer;
import dev.stagger.spring.internal.InstanceFactory;
import dev.stagger.spring.internal.KafkaListenerMethods;
import dev.stagger.spring.internal.PropertyCheck;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Stagger's own Kafka consumers from properties ({@code stagger.kafka.consumers.<name>.*}), with
 * stagger-kafka on the class path: a {@link KafkaRetryConsumer} per entry, its handler the
 * {@link KafkaHandler} bean the entry names, its policy a retry of {@code stagger.retries}, all
 * in {@link StaggerKafkaConsumers}, started and stopped with the context. A bean method annotated
 * {@link StaggerKafkaListener} is the handler of the consumer it names (an entry's, or one with
 * the defaults when there is no entry).
 *
 * <p>The connection is Spring Boot's: {@code spring.kafka.bootstrap-servers} (required when a
 * consumer is configured) and {@code spring.kafka.properties.*} (security and any other client
 * setting), given to the consumer, its producer and its admin client. With stagger-observability
 * and a {@code MeterRegistry} bean, each consumer reports through {@code RecordTelemetry} (the meters
 * and log lines of the RabbitMQ consumer); with an {@code ObservationRegistry}, each handler run
 * is observed ({@code RecordObservation}); {@code stagger.metrics.enabled} and
 * {@code stagger.observation.enabled} turn them off as for every Stagger component.
 */
@AutoConfiguration(afterName = {"dev.stagger.spring.StaggerAutoConfiguration",
        "dev.stagger.spring.StaggerObservabilityAutoConfiguration"})
@ConditionalOnClass(KafkaRetryConsumer.class)
@EnableConfigurationProperties(StaggerKafkaProperties.class)
public class StaggerKafkaAutoConfiguration {
    private static final String CONSUMERS = "stagger.kafka.consumers";
    private static final ClassLoader LOADER = StaggerKafkaAutoConfiguration.class.getClassLoader();
    private static final boolean TELEMETRY = ClassUtils.isPresent("dev.stagger.observability.RecordTelemetry", LOADER)
            && ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", LOADER);
    private static final boolean OBSERVATION = ClassUtils.isPresent("dev.stagger.observability.RecordObservation", LOADER)
            && ClassUtils.isPresent("io.micrometer.observation.ObservationRegistry", LOADER);

    /** The {@link StaggerKafkaListener} methods: static, a bean post-processor created before the others. */
    @Bean
    static KafkaListenerMethods staggerKafkaListenerMethods() {
        return new KafkaListenerMethods();
    }

    @Bean
    @ConditionalOnMissingBean
    public StaggerKafkaConsumers staggerKafkaConsumers(StaggerKafkaProperties kafka, StaggerProperties stagger,
                                                       StaggerRegistry registry, Environment environment,
                                                       ConfigurableListableBeanFactory beans,
                                                       ObjectProvider<KafkaConsumerCustomizer> customizers) {
        return new StaggerKafkaConsumers(() -> consumers(kafka, stagger, registry, Binder.get(environment), beans,
                customizers.orderedStream().toList(), listeners(beans)), kafka.getPhase());
    }

    /** The {@link StaggerKafkaListener} methods found, by consumer. */
    private static Map<String, KafkaListenerMethods.Listener> listeners(ConfigurableListableBeanFactory beans) {
        KafkaListenerMethods methods = beans.getBeanProvider(KafkaListenerMethods.class).getIfUnique();
        return methods == null ? Map.of() : methods.listeners();
    }

    private static Map<String, KafkaRetryConsumer> consumers(StaggerKafkaProperties kafka, StaggerProperties stagger,
                                                             StaggerRegistry registry, Binder binder,
                                                             ConfigurableListableBeanFactory beans,
                                                             List<KafkaConsumerCustomizer> customizers,
                                                             Map<String, KafkaListenerMethods.Listener> listeners) {
        Map<String, KafkaRetryConsumer> consumers = new LinkedHashMap<>();
        Map<String, Consumer> entries = new LinkedHashMap<>(kafka.getConsumers());
        listeners.keySet().forEach(name -> entries.putIfAbsent(name, new Consumer())); // a listener's defaults
        if (entries.isEmpty()) {
            return consumers;
        }
        Map<String, Object> client = clientConfig(binder);
        List<RecordListener> telemetry = telemetry(stagger, beans);
        entries.forEach((name, p) -> {
            String at = InstanceFactory.key(CONSUMERS, name) + ".";
            KafkaListenerMethods.Listener listener = listeners.get(name);
            KafkaHandler handler = listener == null ? handler(beans, at, p.getHandler() != null ? p.getHandler() : name)
                    : listenerHandler(beans, at, name, p, listener);
            Map<String, Object> config = new HashMap<>(client);
            if (p.getGroup() != null) {
                config.put("group.id", p.getGroup());
            }
            KafkaRetryConsumer.Builder b;
            try {
                b = KafkaRetryConsumer.builder(name, config, handler);
            } catch (IllegalArgumentException e) {
                throw PropertyCheck.invalid(InstanceFactory.key(CONSUMERS, name), name, e.getMessage());
            }
            if (listener != null && listener.topic() != null) {
                listenerTopic(b, at, p, listener);
            }
            apply(b, p, at, registry);
            telemetry.forEach(b::recordListener);
            customizers.forEach(c -> c.customize(name, b));
            consumers.put(name, b.build());
        });
        return consumers;
    }

    private static void apply(KafkaRetryConsumer.Builder b, Consumer p, String at, StaggerRegistry registry) {
        PropertyCheck.apply(at + "topic", p.getTopic(), b::topic);
        PropertyCheck.apply(at + "retry", p.getRetry(), retry -> b.policy(registry.bareRetry(retry).policy()));
        PropertyCheck.apply(at + "delay-levels", p.getDelayLevels().isEmpty() ? null : p.getDelayLevels(), b::delayLevels);
        PropertyCheck.apply(at + "concurrency", p.getConcurrency(), b::concurrency);
        if (p.getMaxHeldPerKey() != null || p.getMaxHeld() != null) {
            Integer perKey = p.getMaxHeldPerKey();
            if (perKey == null) {
                throw PropertyCheck.invalid(at + "max-held", p.getMaxHeld(), "key order needs " + at + "max-held-per-key too");
            }
            int all = p.getMaxHeld() != null ? p.getMaxHeld() : Math.max(perKey, 10_000);
            PropertyCheck.apply(at + (p.getMaxHeld() != null ? "max-held" : "max-held-per-key"), perKey,
                    n -> b.keyOrder(n, all));
        }
        if (p.getInMemoryRetriesUpTo() != null || p.getMaxInMemoryRetries() != null) {
            Duration upTo = p.getInMemoryRetriesUpTo();
            if (upTo == null) {
                throw PropertyCheck.invalid(at + "max-in-memory-retries", p.getMaxInMemoryRetries(),
                        "retries in memory need " + at + "in-memory-retries-up-to too");
            }
            Integer max = p.getMaxInMemoryRetries();
            PropertyCheck.apply(at + "in-memory-retries-up-to", upTo, d -> b.inMemoryRetries(d, 10_000));
            PropertyCheck.apply(at + "max-in-memory-retries", max, n -> b.inMemoryRetries(upTo, n));
        }
    }

    /** Spring Boot's Kafka connection settings: {@code spring.kafka.properties.*} and the bootstrap servers. */
    private static Map<String, Object> clientConfig(Binder binder) {
        Map<String, Object> config = new HashMap<>(binder.bind("spring.kafka.properties",
                Bindable.mapOf(String.class, String.class)).orElse(Map.of()));
        List<String> servers = binder.bind("spring.kafka.bootstrap-servers", Bindable.listOf(String.class)).orElse(List.of());
        if (!servers.isEmpty()) {
            config.put("bootstrap.servers", String.join(",", servers));
        }
        if (!config.containsKey("bootstrap.servers")) {
            throw PropertyCheck.invalid("spring.kafka.bootstrap-servers", "(not set)",
                    "the consumers under " + CONSUMERS + " need the broker's address");
        }
        return config;
    }

    private static KafkaHandler handler(ConfigurableListableBeanFactory beans, String at, String bean) {
        try {
            return beans.getBean(bean, KafkaHandler.class);
        } catch (NoSuchBeanDefinitionException e) {
            throw PropertyCheck.invalid(at + "handler", bean, "no KafkaHandler bean named '" + bean + "'; KafkaHandler beans: "
                    + List.of(beans.getBeanNamesForType(KafkaHandler.class)));
        }
    }

    /** A consumer's {@link StaggerKafkaListener} method, when it has no other handler. */
    private static KafkaHandler listenerHandler(ConfigurableListableBeanFactory beans, String at, String name, Consumer p,
                                                KafkaListenerMethods.Listener listener) {
        if (p.getHandler() != null) {
            throw PropertyCheck.invalid(at + "handler", p.getHandler(), "consumer '" + name + "' has the "
                    + listener.method() + " as its handler; a consumer has one handler");
        }
        if (beans.containsBean(name) && beans.isTypeMatch(name, KafkaHandler.class)) {
            throw new IllegalStateException("two handlers for consumer '" + name + "': the KafkaHandler bean '" + name
                    + "' and the " + listener.method() + "; a consumer has one handler");
        }
        return listener.handler();
    }

    /** The work topic a {@link StaggerKafkaListener} method names. */
    private static void listenerTopic(KafkaRetryConsumer.Builder b, String at, Consumer p, KafkaListenerMethods.Listener listener) {
        String topic = Objects.requireNonNull(listener.topic());
        if (p.getTopic() != null && !p.getTopic().equals(topic)) {
            throw PropertyCheck.invalid(at + "topic", p.getTopic(), "the " + listener.method() + " names topic '" + topic + "'");
        }
        try {
            b.topic(topic);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("the " + listener.method() + " names topic '" + topic + "': " + e.getMessage(), e);
        }
    }

    /** The listeners the consumers report through: an observation of each handler run, meters and log lines. */
    private static List<RecordListener> telemetry(StaggerProperties stagger, ConfigurableListableBeanFactory beans) {
        List<RecordListener> listeners = new ArrayList<>();
        if (OBSERVATION && stagger.getObservation().isEnabled()) {
            Object registry = beans.getBeanProvider(io.micrometer.observation.ObservationRegistry.class).getIfUnique();
            if (registry != null) {
                listeners.add(Telemetry.observed(registry));
            }
        }
        if (TELEMETRY && stagger.getMetrics().isEnabled()) {
            Object registry = beans.getBeanProvider(io.micrometer.core.instrument.MeterRegistry.class).getIfUnique();
            if (registry != null) {
                listeners.add(Telemetry.metered(registry));
            }
        }
        return listeners;
    }

    /** Loaded only with stagger-observability and Micrometer present. */
    private static final class Telemetry {
        static RecordListener metered(Object registry) {
            return dev.stagger.observability.RecordTelemetry.of((io.micrometer.core.instrument.MeterRegistry) registry);
        }

        static RecordListener observed(Object registry) {
            return dev.stagger.observability.RecordObservation.of((io.micrometer.observation.ObservationRegistry) registry);
        }
    }
}
