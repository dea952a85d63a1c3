package dev.stagger.rabbitmq;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.stagger.jdbc.testsupport.TestDatabases;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;

/**
 * The local RabbitMQ for tests: {@code STAGGER_RABBITMQ_HOST} (default 127.0.0.1),
 * {@code STAGGER_RABBITMQ_PORT} (5672), user and password guest/guest. Where it is unreachable a
 * test is skipped with a message saying how to provide it, except under {@code CI=true}, where it
 * fails instead. Queue names are unique to the run.
 */
final class TestBroker {
    private TestBroker() {
    }

    static ConnectionFactory factory() {
        return factory(env("STAGGER_RABBITMQ_HOST", "127.0.0.1"), Integer.parseInt(env("STAGGER_RABBITMQ_PORT", "5672")));
    }

    static ConnectionFactory factory(String host, int port) {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost(host);
        f.setPort(port);
        f.setUsername("guest");
        f.setPassword("guest");
        f.setConnectionTimeout(5_000);
        return f;
    }

    /** A connection to the test broker, or the test is skipped (failed under CI). */
    static Connection connect() {
        ConnectionFactory f = factory();
        try {
            return f.newConnection("stagger-test");
        } catch (IOException | TimeoutException e) {
            String message = "RabbitMQ is not reachable at " + f.getHost() + ":" + f.getPort() + " (" + e
                    + "); start it (rabbitmq-server -detached) or set STAGGER_RABBITMQ_HOST/STAGGER_RABBITMQ_PORT";
            if (TestDatabases.ci()) {
                fail("CI=true requires RabbitMQ: " + message);
            }
            assumeTrue(false, message);
            throw new AssertionError("unreachable");
        }
    }

    static String uniqueQueue(String what) {
        return "stagger-test-" + what + "-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime());
    }

    static void publish(Channel channel, String queue, String id, String body) throws IOException {
        channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    /** Declares {@code queue} durable and publishes {@code n} persistent messages {@code m-0 .. m-(n-1)}, confirmed. */
    static void publishPersistent(Connection connection, String queue, int n) throws Exception {
        Channel ch = connection.createChannel();
        try {
            ch.queueDeclare(queue, true, false, false, null);
            ch.confirmSelect();
            for (int i = 0; i < n; i++) {
                ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId("m-" + i).deliveryMode(2).build(),
                        new byte[16]);
            }
            ch.waitForConfirmsOrDie(60_000);
        } finally {
            close(ch);
        }
    }

    /** Deletes a consumer's queues (work, delay levels, dead letters). */
    static void deleteQueues(Connection connection, RabbitConsumer consumer) throws IOException {
        deleteQueues(connection, consumer.queue());
        for (String q : consumer.delayQueues()) {
            deleteQueues(connection, q);
        }
        deleteQueues(connection, consumer.deadLetterQueue());
    }

    static void deleteQueues(Connection connection, String... queues) throws IOException {
        for (String q : queues) {
            Channel ch = connection.createChannel();
            try {
                ch.queueDelete(q);
            } finally {
                close(ch);
            }
        }
    }

    static long messageCount(Connection connection, String queue) throws IOException {
        Channel ch = connection.createChannel();
        try {
            return ch.queueDeclarePassive(queue).getMessageCount();
        } finally {
            close(ch);
        }
    }

    static void close(Channel ch) {
        if (ch.isOpen()) {
            try {
                ch.close();
            } catch (IOException | TimeoutException e) {
                // test cleanup
            }
        }
    }

    static List<Duration> levels(long... millis) {
        return java.util.Arrays.stream(millis).mapToObj(Duration::ofMillis).toList();
    }

    /** Polls {@code condition} every 20 ms until it holds; fails after {@code timeout}. */
    static void await(String what, Duration timeout, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
