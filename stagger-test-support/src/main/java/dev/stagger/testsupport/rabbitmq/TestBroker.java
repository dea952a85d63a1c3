package dev.stagger.testsupport.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.stagger.testsupport.Services;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;

/**
 * The local RabbitMQ for tests: {@code STAGGER_RABBITMQ_HOST} (default 127.0.0.1),
 * {@code STAGGER_RABBITMQ_PORT} (5672), user and password guest/guest. Where it is unreachable a
 * test is skipped with a message saying how to provide it, except under {@code CI=true}, where it
 * fails instead. Queue names are unique to the run.
 */
public final class TestBroker {
    private TestBroker() {
    }

    public static ConnectionFactory factory() {
        return factory(env("STAGGER_RABBITMQ_HOST", "127.0.0.1"), Integer.parseInt(env("STAGGER_RABBITMQ_PORT", "5672")));
    }

    public static ConnectionFactory factory(String host, int port) {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost(host);
        f.setPort(port);
        f.setUsername("guest");
        f.setPassword("guest");
        f.setConnectionTimeout(5_000);
        return f;
    }

    /** A connection to the test broker, or the test is skipped (failed under CI). */
    public static Connection connect() {
        ConnectionFactory f = factory();
        try {
            return f.newConnection("stagger-test");
        } catch (IOException | TimeoutException e) {
            String message = "RabbitMQ is not reachable at " + f.getHost() + ":" + f.getPort() + " (" + e
                    + "); start it (rabbitmq-server -detached) or set STAGGER_RABBITMQ_HOST/STAGGER_RABBITMQ_PORT";
            throw Services.unavailable("RabbitMQ", message);
        }
    }

    public static String uniqueQueue(String what) {
        return "stagger-test-" + what + "-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime());
    }

    public static void publish(Channel channel, String queue, String id, String body) throws IOException {
        channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    /** Declares {@code queue} durable and publishes {@code n} persistent messages {@code m-0 .. m-(n-1)}, confirmed. */
    public static void publishPersistent(Connection connection, String queue, int n) throws Exception {
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


    public static void deleteQueues(Connection connection, String... queues) throws IOException {
        for (String q : queues) {
            Channel ch = connection.createChannel();
            try {
                ch.queueDelete(q);
            } finally {
                close(ch);
            }
        }
    }

    public static long messageCount(Connection connection, String queue) throws IOException {
        Channel ch = connection.createChannel();
        try {
            return ch.queueDeclarePassive(queue).getMessageCount();
        } finally {
            close(ch);
        }
    }

    public static void close(Channel ch) {
        if (ch.isOpen()) {
            try {
                ch.close();
            } catch (IOException | TimeoutException e) {
                // test cleanup
            }
        }
    }

    public static List<Duration> levels(long... millis) {
        return java.util.Arrays.stream(millis).mapToObj(Duration::ofMillis).toList();
    }


    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
