package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.kafka.KafkaDeadLetter;
import dev.stagger.kafka.KafkaDeadLetters;
import dev.stagger.kafka.KafkaHandler;
import dev.stagger.kafka.KafkaMessage;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.kafka.TestKafka;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Stagger's Kafka consumers from {@code stagger.kafka.consumers}, started and stopped with the context, on the real broker. */
class StaggerKafkaConsumersTest {
    static final AutoConfigurations KAFKA = AutoConfigurations.of(StaggerAutoConfiguration.class,
            StaggerObservabilityAutoConfiguration.class, StaggerKafkaAutoConfiguration.class);

    private String bootstrap;
    private String topic;

    /** A handler bean: keeps what it was given; fails the values starting with "fail". */
    static class Received implements KafkaHandler {
        final BlockingQueue<String> values = new LinkedBlockingQueue<>();

        @Override
        public void handle(KafkaMessage message) {
            String value = new String(message.value(), StandardCharsets.UTF_8);
            values.add(value);
            if (value.startsWith("fail")) {
                throw new IllegalStateException("failing " + value);
            }
        }
    }

    @BeforeEach
    void broker() {
        bootstrap = TestKafka.reachableBootstrap();
        topic = TestKafka.uniqueTopic("consumers");
    }

    static void send(String bootstrap, String topic, String key, String value) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap),
                new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, key, value)).get(30, TimeUnit.SECONDS);
        }
    }

    private ApplicationContextRunner runner(String... properties) {
        return new ApplicationContextRunner().withConfiguration(KAFKA)
                .withBean(topic, Received.class, Received::new)
                .withPropertyValues("spring.kafka.bootstrap-servers=" + bootstrap,
                        "stagger.kafka.consumers." + topic + ".delay-levels=20ms,100ms")
                .withPropertyValues(properties);
    }

    /** The innermost cause: a startup failure is wrapped by the context, or not, depending on where it was thrown. */
    static Throwable root(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static boolean pollThreadAlive(String name) {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().equals("stagger-kafka-" + name + "-poll"));
    }

    @Test
    void aConfiguredConsumerHandsRecordsToTheHandlerBeanOfItsNameAndStopsWithTheContext() throws Exception {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            StaggerKafkaConsumers consumers = context.getBean(StaggerKafkaConsumers.class);
            assertThat(consumers.isRunning()).isTrue();
            assertThat(consumers.consumers()).containsOnlyKeys(topic);
            send(bootstrap, topic, "k", "hello");
            assertThat(context.getBean(topic, Received.class).values.poll(30, TimeUnit.SECONDS)).isEqualTo("hello");
            assertThat(pollThreadAlive(topic)).isTrue();
        });
        assertThat(pollThreadAlive(topic)).as("the poll thread after the context closed").isFalse();
    }

    @Test
    void eachConsumerReportsThroughTheMeterRegistry() throws Exception {
        runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            send(bootstrap, topic, "k", "counted");
            assertThat(context.getBean(topic, Received.class).values.poll(30, TimeUnit.SECONDS)).isEqualTo("counted");
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(Await.within(Duration.ofSeconds(10), () -> registry.find("stagger.messages")
                    .tag("name", topic).tag("outcome", "succeeded").counters().stream()
                    .mapToDouble(c -> c.count()).sum() == 1.0)).isTrue();
        });
    }

    @Test
    void aMissingHandlerBeanFailsStartupNamingTheProperty() {
        runner("stagger.kafka.consumers." + topic + ".handler=nobody").run(context -> {
            assertThat(context).hasFailed();
            assertThat(root(context.getStartupFailure())).isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("stagger.kafka.consumers." + topic + ".handler").hasMessageContaining("nobody");
        });
    }

    @Test
    void consumersWithoutBootstrapServersFailStartupNamingTheSpringProperty() {
        new ApplicationContextRunner().withConfiguration(KAFKA).withBean(topic, Received.class, Received::new)
                .withPropertyValues("stagger.kafka.consumers." + topic + ".concurrency=2").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(root(context.getStartupFailure())).isInstanceOf(InvalidConfigurationPropertyValueException.class)
                            .hasMessageContaining("spring.kafka.bootstrap-servers");
                });
    }

    @Test
    void withoutConsumersNothingConnects() {
        new ApplicationContextRunner().withConfiguration(KAFKA).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(StaggerKafkaConsumers.class).consumers()).isEmpty();
        });
    }

    @Test
    void aFailingRecordIsDeadLetteredAfterTheAttemptsOfItsNamedRetry() throws Exception {
        runner("stagger.kafka.consumers." + topic + ".retry=quick", "stagger.retries.quick.max-attempts=2",
                "stagger.retries.quick.backoff.type=fixed", "stagger.retries.quick.backoff.base=10ms").run(context -> {
            send(bootstrap, topic, "k", "fail-me");
            Received received = context.getBean(topic, Received.class);
            assertThat(received.values.poll(30, TimeUnit.SECONDS)).isEqualTo("fail-me");
            assertThat(received.values.poll(30, TimeUnit.SECONDS)).isEqualTo("fail-me");
            List<KafkaDeadLetter> dead = deadLetters(bootstrap, topic, 1);
            assertThat(dead).hasSize(1);
            assertThat(dead.get(0).attempts()).isEqualTo(2);
            assertThat(dead.get(0).endReason()).contains("EXHAUSTED");
            assertThat(received.values).isEmpty();
        });
    }

    /** The dead letters of work topic {@code topic}, once there are at least {@code atLeast} (or 30 s passed). */
    static List<KafkaDeadLetter> deadLetters(String bootstrap, String topic, int atLeast) throws InterruptedException {
        KafkaDeadLetters dead = KafkaDeadLetters.of(Map.of("bootstrap.servers", bootstrap), topic);
        Await.within(Duration.ofSeconds(30), () -> dead.count() >= atLeast);
        return dead.list(100);
    }
}
