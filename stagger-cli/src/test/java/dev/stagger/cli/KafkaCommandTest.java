package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RetryPolicy;
import dev.stagger.kafka.KafkaDeadLetters;
import dev.stagger.kafka.KafkaHeaders;
import dev.stagger.kafka.KafkaRetryConsumer;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.kafka.TestKafka;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code stagger kafka} against the local broker ({@code STAGGER_KAFKA_BOOTSTRAP}, default
 * 127.0.0.1:9092, started with {@code stagger-kafka/kafka-broker.sh start}); skipped with a
 * message when it is not running, failed under {@code CI=true}.
 */
class KafkaCommandTest {
    private final String topic = "stagger-cli-test-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime());
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final AtomicInteger handled = new AtomicInteger();
    private String bootstrap;
    private KafkaRetryConsumer consumer;

    @BeforeEach
    void deadLetterTwoRecords() throws Exception {
        bootstrap = TestKafka.reachableBootstrap();
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap);
        consumer = KafkaRetryConsumer.builder(topic, config, m -> {
            if (m.headers().lastHeader(KafkaHeaders.REDRIVES) == null) {
                throw new IllegalStateException("card declined");
            }
            handled.incrementAndGet();
        }).policy(RetryPolicy.builder().maxAttempts(1).build()).delayLevels(List.of(Duration.ofMillis(100)))
                .shutdownTimeout(Duration.ofSeconds(5)).build();
        consumer.start();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (String id : new String[] {"order-1", "order-2"}) {
                producer.send(new ProducerRecord<>(topic, id.getBytes(StandardCharsets.UTF_8), new byte[] {1, 2, 3}))
                        .get(30, TimeUnit.SECONDS);
            }
        }
        awaitDeadLetters(2);
    }

    @AfterEach
    void cleanUp() {
        if (consumer != null) {
            consumer.close();
        }
    }

    private void awaitDeadLetters(long n) throws Exception {
        KafkaDeadLetters dead = KafkaDeadLetters.of(Map.of("bootstrap.servers", bootstrap), topic);
        assertThat(TestKafka.awaitThroughNewTopic(Duration.ofSeconds(20), () -> dead.count() == n))
                .as(n + " dead letters").isTrue();
    }

    private int run(String... args) {
        CommandLine cli = Main.configure(new CommandLine(new KafkaCommand()));
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void deadListsTheDeadLettersWithTheirHistoryAndLeavesThemThere() throws Exception {
        assertThat(run("dead", "--topic", topic, "--bootstrap", bootstrap)).as(err.toString()).isZero();
        assertThat(out.toString()).contains("2 dead letter(s) in " + topic + ".stagger.dlt")
                .contains("record " + topic + "/0/0 (0/0): EXHAUSTED after 1 attempt(s) at ")
                .contains("attempt 1 at ").contains("java.lang.IllegalStateException: card declined")
                .contains("record " + topic + "/0/1 (0/1)").contains("3 bytes");
        awaitDeadLetters(2);
    }

    @Test
    void deadShowsTheFirstOnesUpToTheLimit() {
        assertThat(run("dead", "--topic", topic, "--bootstrap", bootstrap, "--limit", "1")).isZero();
        assertThat(out.toString()).contains("2 dead letter(s) in " + topic + ".stagger.dlt, showing the first 1")
                .doesNotContain(topic + "/0/1");
    }

    @Test
    void redriveSendsThemBackToTheWorkTopicOnce() throws Exception {
        assertThat(run("redrive", "--topic", topic, "--bootstrap", bootstrap, "--timeout", "5s")).as(err.toString()).isZero();
        assertThat(out.toString()).contains("re-drove 2 dead letter(s) to " + topic);
        Await.until("re-driven records handled", Duration.ofSeconds(20), () -> handled.get() >= 2);
        awaitDeadLetters(0);
        assertThat(run("redrive", "--topic", topic, "--bootstrap", bootstrap)).isZero();
        assertThat(out.toString()).contains("re-drove 0 dead letter(s)");
        assertThat(handled.get()).isEqualTo(2);
    }

    @Test
    void purgeDeletesThem() throws Exception {
        assertThat(run("purge", "--topic", topic, "--bootstrap", bootstrap)).as(err.toString()).isZero();
        assertThat(out.toString()).contains("purged 2 dead letter(s) from " + topic + ".stagger.dlt");
        awaitDeadLetters(0);
    }

    @Test
    void aBadBootstrapOrDurationIsABadArgument() {
        assertThat(run("dead", "--topic", topic, "--bootstrap", "no port")).isEqualTo(2);
        assertThat(err.toString()).contains("--bootstrap must be HOST:PORT[,HOST:PORT...], got 'no port'");
        assertThat(run("dead", "--topic", topic, "--timeout", "soon")).isEqualTo(2);
        assertThat(err.toString()).contains("--timeout", "'soon' is not a duration");
        assertThat(run("dead", "--topic", topic, "--limit", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("limit must be 1 to 100000, got 0");
    }

    @Test
    void anUnknownTopicIsABrokerError() {
        assertThat(run("dead", "--topic", topic + "-missing", "--bootstrap", bootstrap, "--timeout", "3s")).isEqualTo(3);
        assertThat(err.toString()).contains("broker error").contains(topic + "-missing.stagger.dlt");
    }
}
