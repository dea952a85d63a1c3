package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RetryListener;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * {@link RecordListener#onHandling} on the real broker: the scope a listener opens is open on the
 * handler's thread while the handler runs, for every attempt (the first from the work topic, the
 * later ones from delay topics), and closed as it returns, before the outcome is told.
 */
class HandlingHookTest extends BrokerTest {
    private static final ThreadLocal<String> OPEN = new ThreadLocal<>();

    @Test
    void theListenersScopeIsOpenOnTheHandlersThreadForEveryAttemptAndClosedBeforeTheOutcome() throws Exception {
        String topic = TestKafka.uniqueTopic("hook");
        List<String> trail = new CopyOnWriteArrayList<>();
        RecordListener hook = new RecordListener() {
            @Override
            public void onRecord(RecordEvent event) {
                trail.add("told " + event.outcome() + " " + event.attempt());
            }

            @Override
            public RetryListener.Scope onHandling(KafkaMessage message) {
                OPEN.set(message.topic() + "@" + message.attempt());
                return () -> {
                    trail.add("closed " + OPEN.get());
                    OPEN.remove();
                };
            }
        };
        start(KafkaRetryConsumer.builder(topic, config, m -> {
            trail.add("handler saw " + OPEN.get());
            if (m.attempt() < 3) {
                throw new IOException("attempt " + m.attempt());
            }
        }).policy(KafkaRetryConsumerTest.policy(3)).recordListener(hook));
        TestKafka.send(producer, new ProducerRecord<>(topic, "k".getBytes(StandardCharsets.UTF_8),
                "x".getBytes(StandardCharsets.UTF_8)));
        assertThat(TestKafka.await(WITHIN, () -> trail.contains("told SUCCEEDED 3"))).as("trail %s", trail).isTrue();

        for (int attempt = 1; attempt <= 3; attempt++) {
            int saw = trail.indexOf("handler saw " + topic + "@" + attempt);
            int closed = trail.indexOf("closed " + topic + "@" + attempt);
            int told = trail.indexOf("told " + (attempt < 3 ? "RETRIED " : "SUCCEEDED ") + attempt);
            assertThat(saw).as("attempt %d ran inside its scope: %s", attempt, trail).isNotNegative();
            assertThat(closed).as("attempt %d's scope closed as the handler returned", attempt).isEqualTo(saw + 1);
            assertThat(told).as("attempt %d told after its scope closed", attempt).isGreaterThan(closed);
        }
    }

    @Test
    void aListenerThatThrowsChangesNothing() throws Exception {
        String topic = TestKafka.uniqueTopic("hook-throws");
        List<RecordOutcome> outcomes = new CopyOnWriteArrayList<>();
        RecordListener broken = new RecordListener() {
            @Override
            public void onRecord(RecordEvent event) {
                outcomes.add(event.outcome());
            }

            @Override
            public RetryListener.Scope onHandling(KafkaMessage message) {
                throw new IllegalStateException("broken listener");
            }
        };
        start(KafkaRetryConsumer.builder(topic, config, m -> { }).policy(KafkaRetryConsumerTest.policy(3))
                .recordListener(broken));
        TestKafka.send(producer, new ProducerRecord<>(topic, "k".getBytes(StandardCharsets.UTF_8),
                "x".getBytes(StandardCharsets.UTF_8)));
        assertThat(TestKafka.await(WITHIN, () -> outcomes.contains(RecordOutcome.SUCCEEDED))).isTrue();
        assertThat(outcomes).containsExactly(RecordOutcome.SUCCEEDED);
    }
}
