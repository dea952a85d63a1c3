package dev.stagger.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.rabbitmq.DedicatedBroker;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A broker restart while consuming, on a RabbitMQ node of the test's own ({@link DedicatedBroker}):
 * the RabbitMQ application is stopped (every connection drops) and started again, recovering its
 * durable queues and persistent messages from disk. The same consumer object must reconnect by
 * itself (the client's automatic connection and topology recovery) and process every message.
 */
class BrokerRestartTest {
    private static final int MESSAGES = 2_000;

    @Test
    void theConsumerRecoversByItselfAfterABrokerRestartAndNoMessageIsLost() throws Exception {
        try (DedicatedBroker broker = DedicatedBroker.start()) {
            ConnectionFactory factory = TestBroker.factory("127.0.0.1", broker.port());
            factory.setNetworkRecoveryInterval(500);
            String queue = TestBroker.uniqueQueue("restart");
            Set<String> handled = ConcurrentHashMap.newKeySet();
            AtomicInteger deliveries = new AtomicInteger();
            RabbitConsumer consumer = RabbitConsumer.builder(queue, factory, m -> {
                String id = m.id().orElseThrow();
                deliveries.incrementAndGet();
                if (m.attempt() == 1 && Math.floorMod(id.hashCode(), 10) == 0) {
                    throw new IOException("first attempt fails"); // some messages sit in delay queues during the restart
                }
                Thread.sleep(10); // keep messages in flight while the broker goes down
                handled.add(id);
            }).policy(RetryPolicy.builder().maxAttempts(20).backoff(Backoff.fixed(Duration.ofMillis(200))).build())
                    .delayLevels(TestBroker.levels(200)).concurrency(4).build();
            try (Connection publisher = factory.newConnection("stagger-test-publisher")) {
                TestBroker.publishPersistent(publisher, queue, MESSAGES);
            }
            consumer.start();
            Await.until("a fifth handled", Duration.ofSeconds(60), () -> handled.size() >= MESSAGES / 5);
            broker.stopApp();
            int handledWhileDown = handled.size(); // plus at most the prefetched few still finishing
            broker.startApp();
            Await.until("every message handled after the restart", Duration.ofSeconds(120),
                    () -> handled.size() == MESSAGES);
            consumer.close();
            System.out.printf("broker restart: %d messages, %d handled before the restart, all %d after it,"
                    + " %d deliveries in all%n", MESSAGES, handledWhileDown, handled.size(), deliveries.get());
            assertThat(handledWhileDown).isLessThan(MESSAGES);
            assertThat(handled).hasSize(MESSAGES);
            try (Connection check = factory.newConnection("stagger-test-check")) {
                assertThat(TestBroker.messageCount(check, queue)).isZero();
                assertThat(TestBroker.messageCount(check, queue + ".stagger.dead")).isZero();
            }
        }
    }
}
