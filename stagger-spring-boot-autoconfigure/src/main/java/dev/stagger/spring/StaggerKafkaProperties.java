package dev.stagger.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.context.SmartLifecycle;

/**
 * Stagger's Kafka consumers, {@code stagger.kafka.*}: one {@code KafkaRetryConsumer} per entry of
 * {@code stagger.kafka.consumers}, its handler a {@code KafkaHandler} bean. The broker and the
 * client settings are Spring Boot's own ({@code spring.kafka.bootstrap-servers} and
 * {@code spring.kafka.properties.*}), so an application that already talks to Kafka through Boot
 * configures the connection once.
 *
 * <pre>
 * spring.kafka.bootstrap-servers: 127.0.0.1:9092
 * stagger:
 *   retries:
 *     orders: { max-attempts: 6, backoff: { base: 1s, max-delay: 5m } }
 *   kafka:
 *     consumers:
 *       orders: { handler: orderHandler, retry: orders, concurrency: 8, max-held-per-key: 100 }
 * </pre>
 */
@ConfigurationProperties("stagger.kafka")
public class StaggerKafkaProperties {
    /**
     * The lifecycle phase in which the consumers start (and, in reverse order, stop); default
     * {@link SmartLifecycle#DEFAULT_PHASE}: after the web server, so records are consumed once
     * the service is up, and consumption stops first.
     */
    private int phase = SmartLifecycle.DEFAULT_PHASE;
    /** The consumers, by name: the name is the work topic and the consumer group unless set otherwise. */
    private Map<String, Consumer> consumers = new LinkedHashMap<>();

    public int getPhase() { return phase; }
    public void setPhase(int phase) { this.phase = phase; }
    public Map<String, Consumer> getConsumers() { return consumers; }
    public void setConsumers(Map<String, Consumer> consumers) { this.consumers = consumers; }

    /** One consumer; what is not set keeps the consumer's default (see {@code KafkaRetryConsumer.Builder}). */
    public static class Consumer {
        /** The work topic; default: the consumer's name. */
        private @Nullable String topic;
        /** The consumer group ({@code group.id}); default: the consumer's name. */
        private @Nullable String group;
        /** The name of the {@code KafkaHandler} bean that handles the records; default: the consumer's name. */
        private @Nullable String handler;
        /**
         * The retry under {@code stagger.retries} whose policy decides (attempts, backoff, jitter,
         * deadline, classification); default: the consumer's {@code RetryPolicy.background()}.
         */
        private @Nullable String retry;
        /** The delay levels, one delay topic each; default: a 1-2-5 series from 20 ms to 1 hour. */
        private List<Duration> delayLevels = new ArrayList<>();
        /** Handlers running at once (each partition's records one at a time); default 4. */
        private @Nullable Integer concurrency;
        /**
         * Key order: at most this many records of one key held back behind the key's retry; setting
         * it turns key order on (off by default: a retried record's later records of its key overtake it).
         */
        private @Nullable Integer maxHeldPerKey;
        /** Key order: at most this many records held back in all; default 10000 (with {@code max-held-per-key}). */
        private @Nullable Integer maxHeld;
        /**
         * Retries in memory: a retry whose wait is at most this waits in the consumer's memory
         * instead of a delay topic; setting it turns them on (off by default). 1 ms to 1 minute.
         */
        private @Nullable Duration inMemoryRetriesUpTo;
        /** Retries in memory: at most this many at once; default 10000 (with {@code in-memory-retries-up-to}). */
        private @Nullable Integer maxInMemoryRetries;

        public @Nullable String getTopic() { return topic; }
        public void setTopic(@Nullable String topic) { this.topic = topic; }
        public @Nullable String getGroup() { return group; }
        public void setGroup(@Nullable String group) { this.group = group; }
        public @Nullable String getHandler() { return handler; }
        public void setHandler(@Nullable String handler) { this.handler = handler; }
        public @Nullable String getRetry() { return retry; }
        public void setRetry(@Nullable String retry) { this.retry = retry; }
        public List<Duration> getDelayLevels() { return delayLevels; }
        public void setDelayLevels(List<Duration> delayLevels) { this.delayLevels = delayLevels; }
        public @Nullable Integer getConcurrency() { return concurrency; }
        public void setConcurrency(@Nullable Integer concurrency) { this.concurrency = concurrency; }
        public @Nullable Integer getMaxHeldPerKey() { return maxHeldPerKey; }
        public void setMaxHeldPerKey(@Nullable Integer maxHeldPerKey) { this.maxHeldPerKey = maxHeldPerKey; }
        public @Nullable Integer getMaxHeld() { return maxHeld; }
        public void setMaxHeld(@Nullable Integer maxHeld) { this.maxHeld = maxHeld; }
        public @Nullable Duration getInMemoryRetriesUpTo() { return inMemoryRetriesUpTo; }
        public void setInMemoryRetriesUpTo(@Nullable Duration inMemoryRetriesUpTo) { this.inMemoryRetriesUpTo = inMemoryRetriesUpTo; }
        public @Nullable Integer getMaxInMemoryRetries() { return maxInMemoryRetries; }
        public void setMaxInMemoryRetries(@Nullable Integer maxInMemoryRetries) { this.maxInMemoryRetries = maxInMemoryRetries; }
    }
}
