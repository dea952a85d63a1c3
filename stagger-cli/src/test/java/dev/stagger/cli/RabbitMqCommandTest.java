package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.stagger.RetryPolicy;
import dev.stagger.rabbitmq.RabbitConsumer;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code stagger rabbitmq} against the local broker (127.0.0.1:5672, guest/guest); skipped with a
 * message when it is not running, failed under {@code CI=true}.
 */
class RabbitMqCommandTest {
    private final String queue = "stagger-cli-test-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime());
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final AtomicInteger handled = new AtomicInteger();
    private Connection connection;
    private RabbitConsumer consumer;

    @BeforeEach
    void deadLetterTwoMessages() throws Exception {
        ConnectionFactory factory = TestBroker.factory();
        connection = TestBroker.connect();
        consumer = RabbitConsumer.builder(queue, factory, m -> {
            if (m.headers().get("x-stagger-redrives") == null) {
                throw new IllegalStateException("card declined");
            }
            handled.incrementAndGet();
        }).policy(RetryPolicy.builder().maxAttempts(1).build()).delayLevels(java.util.List.of(Duration.ofMillis(10))).build();
        consumer.start();
        Channel ch = connection.createChannel();
        for (String id : new String[] {"order-1", "order-2"}) {
            ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId(id).build(), new byte[] {1, 2, 3});
        }
        awaitDeadLetters(2);
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (connection == null) {
            return;
        }
        consumer.close();
        Channel ch = connection.createChannel();
        ch.queueDelete(queue);
        ch.queueDelete(consumer.deadLetterQueue());
        consumer.delayQueues().forEach(q -> {
            try {
                ch.queueDelete(q);
            } catch (java.io.IOException ignored) {
                // cleanup
            }
        });
        connection.close();
    }

    private void awaitDeadLetters(long n) throws Exception {
        Await.until(n + " dead letters", () -> TestBroker.messageCount(connection, consumer.deadLetterQueue()) == n);
    }

    private int run(String... args) {
        CommandLine cli = Main.configure(new CommandLine(new RabbitMqCommand()));
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void deadListsTheDeadLettersWithTheirHistoryAndLeavesThemThere() throws Exception {
        assertThat(run("dead", "--queue", queue)).isZero();
        assertThat(out.toString()).contains("2 dead letter(s) in " + queue + ".stagger.dead")
                .contains("message order-1: EXHAUSTED after 1 attempt(s) at ")
                .contains("attempt 1 at ").contains("java.lang.IllegalStateException: card declined")
                .contains("message order-2");
        awaitDeadLetters(2);
    }

    @Test
    void redriveSendsThemBackToTheWorkQueue() throws Exception {
        assertThat(run("redrive", "--queue", queue, "--timeout", "5s")).isZero();
        assertThat(out.toString()).contains("re-drove 2 dead letter(s) to " + queue);
        Await.until("re-driven messages handled", () -> handled.get() >= 2);
        awaitDeadLetters(0);
    }

    @Test
    void purgeDeletesThem() throws Exception {
        assertThat(run("purge", "--queue", queue)).isZero();
        assertThat(out.toString()).contains("purged 2 dead letter(s)");
        awaitDeadLetters(0);
    }

    @Test
    void aBadUriOrDurationIsABadArgument() {
        assertThat(run("dead", "--queue", queue, "--uri", "http://nope")).isEqualTo(2);
        assertThat(err.toString()).contains("--uri must be an amqp:// or amqps:// URI");
        assertThat(run("dead", "--queue", queue, "--timeout", "soon")).isEqualTo(2);
        assertThat(err.toString()).contains("--timeout", "'soon' is not a duration"); // Durations, as every command
    }

    @Test
    void anUnknownQueueIsABrokerError() {
        assertThat(run("dead", "--queue", queue + "-missing")).isEqualTo(3);
        assertThat(err.toString()).contains("broker error").contains("NOT_FOUND");
    }
}
