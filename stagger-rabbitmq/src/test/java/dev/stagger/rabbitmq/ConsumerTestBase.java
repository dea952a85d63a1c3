package dev.stagger.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What a consumer test against the real broker sets up for each test: a connection and a channel
 * to publish on, the consumers it starts (closed and their queues deleted afterwards) and every
 * message event they report.
 */
abstract class ConsumerTestBase {
    /** Delay levels short enough that a retried message comes back within a test. */
    static final List<Duration> FAST_LEVELS = TestBroker.levels(10, 20, 50);

    Connection connection;
    Channel channel;
    private final List<RabbitConsumer> consumers = new ArrayList<>();
    private final ConcurrentLinkedQueue<MessageEvent> events = new ConcurrentLinkedQueue<>();

    @BeforeEach
    void connect() throws IOException {
        connection = TestBroker.connect();
        channel = connection.createChannel();
    }

    @AfterEach
    void cleanUp() throws IOException {
        for (RabbitConsumer c : consumers) {
            c.close();
            TestBroker.deleteQueues(connection, c.queue(), c.deadLetterQueue());
            TestBroker.deleteQueues(connection, c.delayQueues().toArray(String[]::new));
        }
        connection.close();
    }

    /** Builds and starts a consumer that reports its events here. */
    RabbitConsumer start(RabbitConsumer.Builder builder) throws IOException {
        RabbitConsumer consumer = builder.messageListener(events::add).build();
        consumers.add(consumer);
        return consumer.start();
    }

    long count(MessageOutcome outcome) {
        return events.stream().filter(e -> e.outcome() == outcome).count();
    }

    List<MessageEvent> events(MessageOutcome outcome) {
        return events.stream().filter(e -> e.outcome() == outcome).toList();
    }
}
