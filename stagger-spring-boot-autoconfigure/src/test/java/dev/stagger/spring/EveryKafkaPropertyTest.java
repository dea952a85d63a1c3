package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.kafka.KafkaHandler;
import dev.stagger.kafka.KafkaMessage;
import dev.stagger.kafka.KafkaRetryConsumer;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.kafka.TestKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Every {@code stagger.kafka.*} property, one by one, on the real broker: set, it shows in what the
 * consumer does (or in the refusal of the builder it was handed to), and the same check fails
 * without it. The list is the IDE metadata's, as in {@link EveryPropertyTest}.
 */
class EveryKafkaPropertyTest {
    static final String PREFIX = "stagger.kafka.";
    private static final String C = "stagger.kafka.consumers.<name>.";

    /** One property (with {@code <name>} for the consumer's), its value, the properties beside it, its check. */
    record Case(String property, String value, List<String> with, Check check) {
        @Override
        public String toString() {
            return property + "=" + value;
        }
    }

    /** What a property's value must change, in a context of a consumer called {@code name} of topic {@code name}. */
    @FunctionalInterface
    interface Check {
        void verify(AssertableApplicationContext context, String bootstrap, String name) throws Exception;
    }

    /** The handler beans: keep what they are given; a value starting with "fail-once" fails its first time. */
    static class Handler implements KafkaHandler {
        final BlockingQueue<String> values = new LinkedBlockingQueue<>();
        final AtomicInteger running = new AtomicInteger();
        final AtomicInteger mostAtOnce = new AtomicInteger();
        private final Set<String> failed = java.util.concurrent.ConcurrentHashMap.newKeySet();

        @Override
        public void handle(KafkaMessage message) throws Exception {
            String value = new String(message.value(), StandardCharsets.UTF_8);
            int now = running.incrementAndGet();
            mostAtOnce.accumulateAndGet(now, Math::max);
            try {
                if (value.startsWith("slow")) {
                    Thread.sleep(1_000); // long enough for a second partition's record to start beside it, if allowed
                }
                values.add(value);
                if (value.startsWith("fail-always") || value.startsWith("fail-once") && failed.add(value)) {
                    throw new IllegalStateException("failing " + value);
                }
            } finally {
                running.decrementAndGet();
            }
        }
    }

    private static Case set(String property, String value, Check check, String... with) {
        return new Case(property, value, List.of(with), check);
    }

    private static KafkaRetryConsumer consumer(AssertableApplicationContext c, String name) {
        assertThat(c).hasNotFailed();
        return c.getBean(StaggerKafkaConsumers.class).consumers().get(name);
    }

    private static Handler handler(AssertableApplicationContext c, String bean) {
        return c.getBean(bean, Handler.class);
    }

    /** Sends {@code records} back to back, in order, and waits for the broker's acknowledgements. */
    @SafeVarargs
    static void send(String bootstrap, ProducerRecord<String, String>... records) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap),
                new StringSerializer(), new StringSerializer())) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (ProducerRecord<String, String> r : records) {
                sent.add(producer.send(r));
            }
            for (java.util.concurrent.Future<?> f : sent) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static ProducerRecord<String, String> record(String topic, int partition, String key, String value) {
        return new ProducerRecord<>(topic, partition, key, value);
    }

    /** The next {@code n} values the handler bean gets (fewer when 20 s pass). */
    private static List<String> next(Handler h, int n) throws InterruptedException {
        List<String> out = new ArrayList<>();
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (out.size() < n) {
            String v = h.values.poll(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (v == null) {
                break;
            }
            out.add(v);
        }
        return out;
    }

    private static void refused(AssertableApplicationContext c, String property) {
        assertThat(c).hasFailed();
        assertThat(StaggerKafkaConsumersTest.root(c.getStartupFailure()))
                .isInstanceOf(InvalidConfigurationPropertyValueException.class).hasMessageContaining(property);
    }

    /** A retry 100 ms after a failure, named quick, used by the consumer. */
    private static final String[] QUICK_RETRY = {"stagger.retries.quick.backoff.type=fixed",
        "stagger.retries.quick.backoff.base=100ms", "stagger.kafka.consumers.<name>.retry=quick"};

    static final List<Case> CASES = List.of(
            set("stagger.kafka.phase", "7", (c, b, n) -> assertThat(c.getBean(StaggerKafkaConsumers.class).getPhase()).isEqualTo(7)),
            set(C + "topic", "other", (c, b, n) -> assertThat(consumer(c, n).topic()).isEqualTo(n + "-other")),
            set(C + "group", "other", (c, b, n) -> {
                send(b, record(n, 0, "k", "v"));
                assertThat(next(handler(c, n), 1)).containsExactly("v");
                try (Admin admin = TestKafka.admin(b)) {
                    assertThat(Await.within(Duration.ofSeconds(10), () -> {
                        try {
                            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(n + "-other")
                                    .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
                            OffsetAndMetadata o = offsets.get(new TopicPartition(n, 0));
                            return o != null && o.offset() == 1;
                        } catch (Exception e) {
                            return false;
                        }
                    })).as("offset committed by group " + n + "-other").isTrue();
                }
            }),
            set(C + "handler", "other", (c, b, n) -> {
                send(b, record(n, 0, "k", "v"));
                assertThat(next(handler(c, "other"), 1)).containsExactly("v");
            }),
            set(C + "retry", "quick", (c, b, n) -> {
                send(b, record(n, 0, "k", "fail-always"));
                assertThat(next(handler(c, n), 2)).containsExactly("fail-always", "fail-always");
                assertThat(StaggerKafkaConsumersTest.deadLetters(b, n, 1)).singleElement()
                        .satisfies(d -> assertThat(d.attempts()).isEqualTo(2));
            }, "stagger.retries.quick.max-attempts=2", "stagger.retries.quick.backoff.type=fixed",
                    "stagger.retries.quick.backoff.base=10ms"),
            set(C + "delay-levels", "50ms", (c, b, n) -> assertThat(consumer(c, n).delayTopics())
                    .containsExactly(n + ".stagger.retry-50")),
            set(C + "concurrency", "1", (c, b, n) -> {
                send(b, record(n, 0, "k", "slow-0"), record(n, 1, "k", "slow-1"));
                assertThat(next(handler(c, n), 2)).containsExactlyInAnyOrder("slow-0", "slow-1");
                assertThat(handler(c, n).mostAtOnce.get()).isEqualTo(1);
            }),
            // key order: the key's later record waits behind its retry (without: it overtakes the retry)
            set(C + "max-held-per-key", "5", (c, b, n) -> {
                send(b, record(n, 0, "A", "fail-once-A1"), record(n, 0, "A", "A2"));
                assertThat(next(handler(c, n), 3)).containsExactly("fail-once-A1", "fail-once-A1", "A2");
            }, "stagger.retries.slow.backoff.type=fixed", "stagger.retries.slow.backoff.base=300ms",
                    "stagger.kafka.consumers.<name>.retry=slow"),
            set(C + "max-held", "1", (c, b, n) -> refused(c, "max-held"), C + "max-held-per-key=5"),
            // retries in memory: the retry runs without a copy in a delay topic (without: through one)
            set(C + "in-memory-retries-up-to", "1s", (c, b, n) -> {
                send(b, record(n, 0, "k", "fail-once"));
                assertThat(next(handler(c, n), 2)).containsExactly("fail-once", "fail-once");
                assertThat(delayCopies(consumer(c, n), b)).isZero();
            }, QUICK_RETRY),
            // at most one in memory: the second record's retry goes through a delay topic (without: none does)
            set(C + "max-in-memory-retries", "1", (c, b, n) -> {
                send(b, record(n, 0, "k", "fail-once-1"), record(n, 0, "k", "fail-once-2"));
                assertThat(next(handler(c, n), 4)).containsExactlyInAnyOrder("fail-once-1", "fail-once-2", "fail-once-1",
                        "fail-once-2");
                assertThat(delayCopies(consumer(c, n), b)).isEqualTo(1);
            }, Stream.concat(Stream.of(QUICK_RETRY), Stream.of(C + "in-memory-retries-up-to=1s")).toArray(String[]::new)));

    /** Records produced to {@code consumer}'s delay topics so far. */
    private static long delayCopies(KafkaRetryConsumer consumer, String bootstrap) {
        return TestKafka.endOffsets(Map.of("bootstrap.servers", bootstrap), consumer.delayTopics());
    }

    private static ApplicationContextRunner runner(String bootstrap, String name, List<String> properties) {
        List<String> all = new ArrayList<>(List.of("spring.kafka.bootstrap-servers=" + bootstrap,
                "stagger.kafka.consumers." + name + ".delay-levels=20ms,200ms"));
        for (String p : properties) {
            // the topic case names a topic of its own, and the group case a group of its own, next to the consumer's
            String v = p.replace("<name>", name);
            all.add(v.endsWith(".topic=other") || v.endsWith(".group=other") ? v.replace("=other", "=" + name + "-other") : v);
        }
        return new ApplicationContextRunner().withConfiguration(StaggerKafkaConsumersTest.KAFKA)
                .withBean(name, Handler.class, Handler::new)
                .withBean("other", Handler.class, Handler::new)
                .withPropertyValues(all.toArray(String[]::new));
    }

    @TestFactory
    Stream<DynamicTest> eachPropertyChangesWhatTheConsumerDoesAndNothingElseDoes() {
        String bootstrap = TestKafka.reachableBootstrap();
        return CASES.stream().map(c -> DynamicTest.dynamicTest(c.toString(), () -> {
            List<String> properties = new ArrayList<>(c.with());
            properties.add(c.property() + "=" + c.value()); // after the runner's delay levels: wins over them
            String name = TestKafka.uniqueTopic("prop");
            TestKafka.createTopic(Map.of("bootstrap.servers", bootstrap), name, 2);
            runner(bootstrap, name, properties).run(context -> c.check().verify(context, bootstrap, name));
            // the control: the same check, without the property, fails
            String control = TestKafka.uniqueTopic("ctl");
            TestKafka.createTopic(Map.of("bootstrap.servers", bootstrap), control, 2);
            runner(bootstrap, control, c.with()).run(context -> assertThatThrownBy(() -> c.check().verify(context, bootstrap,
                    control)).as("the check without " + c.property()).isNotNull());
        }));
    }

    @Test
    void everyKafkaPropertyOfTheMetadataHasACase() throws Exception {
        Set<String> cases = new TreeSet<>();
        CASES.forEach(c -> cases.add(c.property()));
        assertThat(cases).containsExactlyInAnyOrderElementsOf(EveryPropertyTest.leafProperties().stream()
                .filter(p -> p.startsWith(PREFIX)).toList());
    }
}
