package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.Nesting;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** One layer retries a failure: a failure a Stagger retry inside the handler gave up on is dead-lettered, not retried again. */
class NestedRetryInHandlerTest extends BrokerTest {
    private final AtomicInteger downstreamCalls = new AtomicInteger();
    /** The inner retry waits on a virtual clock: no real sleeping. */
    private final Retry http = Retry.of("http", RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(100))).build()).withClock(new VirtualClock()).withoutBudget();

    private String callDownstream() throws IOException {
        downstreamCalls.incrementAndGet();
        throw new IOException("503 from downstream");
    }

    @Test
    void aFailureTheInnerRetryGaveUpOnIsDeadLetteredNotRetriedAgain() throws Exception {
        String topic = TestKafka.uniqueTopic("nested");
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, config, m -> http.call(this::callDownstream))
                .policy(KafkaRetryConsumerTest.policy(4)));
        TestKafka.send(producer, new ProducerRecord<>(topic, "k".getBytes(StandardCharsets.UTF_8), "x".getBytes(StandardCharsets.UTF_8)));

        KafkaDeadLetters letters = KafkaDeadLetters.of(config, topic);
        assertThat(TestKafka.await(WITHIN, () -> letters.count() == 1)).isTrue();
        List<KafkaDeadLetter> dead = letters.list(10);
        assertThat(downstreamCalls).as("the inner retry's 3 attempts, once").hasValue(3);
        assertThat(dead).singleElement().satisfies(d -> {
            assertThat(d.endReason()).contains("NOT_RETRYABLE");
            assertThat(d.cause()).hasValueSatisfying(c -> assertThat(c)
                    .startsWith("DEFERRED: retry 'http' inside the handler decided on the failure (EXHAUSTED after 3"));
        });
        assertThat(consumer.deadLetterTopic()).isEqualTo(topic + ".stagger.dlt");
    }

    @Test
    void retryAgainLetsTheConsumerRetryIt() throws Exception {
        String topic = TestKafka.uniqueTopic("nested-again");
        start(KafkaRetryConsumer.builder(topic, config, m -> http.call(this::callDownstream))
                .policy(KafkaRetryConsumerTest.policy(2)).nesting(Nesting.RETRY_AGAIN));
        TestKafka.send(producer, new ProducerRecord<>(topic, "k".getBytes(StandardCharsets.UTF_8), "x".getBytes(StandardCharsets.UTF_8)));
        KafkaDeadLetters letters = KafkaDeadLetters.of(config, topic);
        assertThat(TestKafka.await(WITHIN, () -> letters.count() == 1)).isTrue();
        assertThat(downstreamCalls).as("3 inner attempts in each of the consumer's 2").hasValue(6);
        assertThat(letters.list(1).get(0).endReason()).contains("EXHAUSTED");
    }

    @Test
    void refuseIsNotAConsumerSetting() {
        assertThatThrownBy(() -> KafkaRetryConsumer.builder("t", java.util.Map.of("bootstrap.servers", "x:1"), m -> { })
                .nesting(Nesting.REFUSE)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("REFUSE");
    }
}
