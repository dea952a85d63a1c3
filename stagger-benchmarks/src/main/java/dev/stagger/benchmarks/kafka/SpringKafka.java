package dev.stagger.benchmarks.kafka;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.retrytopic.RetryTopicConfiguration;
import org.springframework.kafka.retrytopic.RetryTopicConfigurationBuilder;
import org.springframework.kafka.retrytopic.RetryTopicConfigurationSupport;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.util.backoff.FixedBackOff;

/**
 * A Spring Kafka {@code @KafkaListener} application as its users write one (without Boot, so the
 * harness needs no Boot), in one of two retry set-ups: non-blocking retries through retry topics
 * ({@code @RetryableTopic}'s machinery, configured programmatically with
 * {@link RetryTopicConfigurationBuilder}: a fixed back-off, retry topics and a DLT created by
 * {@link KafkaAdmin}), or the blocking retry of the container's {@link DefaultErrorHandler}.
 */
final class SpringKafka implements AutoCloseable {
    /** What the listener does with each record. */
    @FunctionalInterface
    interface Handler {
        void handle(ConsumerRecord<byte[], byte[]> record) throws Exception;
    }

    /**
     * The retry set-up: retry topics as the harness compares them (the copy producer's
     * {@code linger.ms} 0 as Stagger's, and the error handler not seeking back after a failure that
     * went to a retry topic), retry topics with Spring Kafka's defaults (a failure seeks the
     * partitions back to refetch the rest of the poll, and the producer lingers 5 ms, the
     * kafka-clients 4 default, while the listener thread waits for each copy), or blocking retries.
     */
    enum Retries { RETRY_TOPICS, RETRY_TOPICS_DEFAULTS, BLOCKING }

    private final AnnotationConfigApplicationContext context;

    private SpringKafka(AnnotationConfigApplicationContext context) {
        this.context = context;
    }

    /**
     * Starts listening to {@code topic} with {@code concurrency} consumers of group {@code group};
     * a failed record is retried after {@code backoffMillis}, {@code maxAttempts} attempts in all.
     */
    static SpringKafka start(Broker broker, String topic, String group, int concurrency, int partitions, Retries retries,
                             long backoffMillis, int maxAttempts, Handler handler) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("bench", Map.of(
                "bench.bootstrap", broker.bootstrap(), "bench.topic", topic, "bench.group", group,
                "bench.concurrency", Integer.toString(concurrency), "bench.partitions", Integer.toString(partitions),
                "bench.backoff", Long.toString(backoffMillis), "bench.attempts", Integer.toString(maxAttempts),
                "bench.defaults", Boolean.toString(retries == Retries.RETRY_TOPICS_DEFAULTS))));
        context.register(Clients.class, retries == Retries.BLOCKING ? Blocking.class : RetryTopics.class);
        context.registerBean(Listener.class, () -> new Listener(handler));
        context.refresh();
        return new SpringKafka(context);
    }

    @Override
    public void close() {
        context.close();
    }

    /** The clients, as Boot would configure them: byte arrays, the first record of a new group from the start. */
    @Configuration(proxyBeanMethods = false)
    public static class Clients {
        @Bean
        public ProducerFactory<byte[], byte[]> producerFactory(Environment env) {
            Map<String, Object> config = new HashMap<>();
            config.put("bootstrap.servers", env.getRequiredProperty("bench.bootstrap"));
            if (!Boolean.parseBoolean(env.getRequiredProperty("bench.defaults"))) {
                config.put("linger.ms", 0); // as Stagger's copy producer: a copy is sent at once
            }
            return new DefaultKafkaProducerFactory<>(config, new ByteArraySerializer(), new ByteArraySerializer());
        }

        @Bean
        public KafkaTemplate<byte[], byte[]> kafkaTemplate(ProducerFactory<byte[], byte[]> producers) {
            return new KafkaTemplate<>(producers);
        }

        @Bean
        public ConsumerFactory<byte[], byte[]> consumerFactory(Environment env) {
            Map<String, Object> config = new HashMap<>(Broker.FETCH);
            config.put("bootstrap.servers", env.getRequiredProperty("bench.bootstrap"));
            config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            return new DefaultKafkaConsumerFactory<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }

        @Bean
        public KafkaAdmin kafkaAdmin(Environment env) {
            return new KafkaAdmin(Map.of("bootstrap.servers", env.getRequiredProperty("bench.bootstrap")));
        }

        @Bean
        public ThreadPoolTaskScheduler taskScheduler() {
            return new ThreadPoolTaskScheduler();
        }

        static ConcurrentKafkaListenerContainerFactory<byte[], byte[]> factory(ConsumerFactory<byte[], byte[]> consumers,
                                                                               Environment env) {
            ConcurrentKafkaListenerContainerFactory<byte[], byte[]> factory = new ConcurrentKafkaListenerContainerFactory<>();
            factory.setConsumerFactory(consumers);
            factory.setConcurrency(Integer.parseInt(env.getRequiredProperty("bench.concurrency")));
            // as Spring Kafka's documentation advises for short back-offs (a paused retry partition is resumed
            // on the container's next poll); the same 100 ms as Stagger's longest poll
            factory.getContainerProperties().setPollTimeout(100);
            return factory;
        }
    }

    /**
     * Non-blocking retries: retry topics with a fixed back-off, then a DLT ({@code @EnableKafkaRetryTopic}'s
     * configuration, extended to customise the error handler).
     */
    @Configuration(proxyBeanMethods = false)
    @EnableKafka
    public static class RetryTopics extends RetryTopicConfigurationSupport {
        private final boolean defaults;

        public RetryTopics(Environment env) {
            this.defaults = Boolean.parseBoolean(env.getRequiredProperty("bench.defaults"));
        }

        @Override
        protected void configureCustomizers(CustomizersConfigurer customizers) {
            if (!defaults) {
                // a failed record is on its retry topic: the rest of the poll goes on without seeking back and refetching
                customizers.customizeErrorHandler(handler -> handler.setSeekAfterError(false));
            }
        }

        @Bean
        public ConcurrentKafkaListenerContainerFactory<byte[], byte[]> kafkaListenerContainerFactory(
                ConsumerFactory<byte[], byte[]> consumers, Environment env) {
            return Clients.factory(consumers, env);
        }

        @Bean
        public RetryTopicConfiguration retryTopics(KafkaTemplate<byte[], byte[]> template, Environment env) {
            return RetryTopicConfigurationBuilder.newInstance()
                    .fixedBackOff(Long.parseLong(env.getRequiredProperty("bench.backoff")))
                    .maxAttempts(Integer.parseInt(env.getRequiredProperty("bench.attempts")))
                    .includeTopic(env.getRequiredProperty("bench.topic"))
                    .autoCreateTopicsWith(Integer.parseInt(env.getRequiredProperty("bench.partitions")), (short) 1)
                    .create(template);
        }
    }

    /** Blocking retries: the container's error handler seeks back and retries the record after the back-off. */
    @Configuration(proxyBeanMethods = false)
    @EnableKafka
    public static class Blocking {
        @Bean
        public ConcurrentKafkaListenerContainerFactory<byte[], byte[]> kafkaListenerContainerFactory(
                ConsumerFactory<byte[], byte[]> consumers, Environment env) {
            ConcurrentKafkaListenerContainerFactory<byte[], byte[]> factory = Clients.factory(consumers, env);
            factory.setCommonErrorHandler(new DefaultErrorHandler(new FixedBackOff(
                    Long.parseLong(env.getRequiredProperty("bench.backoff")),
                    Integer.parseInt(env.getRequiredProperty("bench.attempts")) - 1)));
            return factory;
        }
    }

    /** The listener bean. */
    public static class Listener {
        private final Handler handler;

        Listener(Handler handler) {
            this.handler = handler;
        }

        @KafkaListener(topics = "${bench.topic}", groupId = "${bench.group}")
        public void on(ConsumerRecord<byte[], byte[]> record) throws Exception {
            handler.handle(record);
        }
    }
}
