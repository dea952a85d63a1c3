package dev.stagger.benchmarks.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.rabbitmq.RabbitConsumer;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Consumer throughput harness (not JMH: each run drains a pre-filled queue). Three consumers in
 * the same run, each draining the same backlog of persistent messages from a durable queue on the
 * local broker: a plain amqp-client consumer (manual ack of each message on the delivery thread),
 * a {@link RabbitConsumer} with a no-op handler, and a {@link RabbitConsumer} whose handler fails
 * the first attempt of every tenth message (a 10 ms wait: retried in place by default, or, with
 * {@code --retry-in-place-ms 0}, through a 10 ms delay queue, the republish confirmed before the ack). Messages/s is backlog / time from start to the last
 * success. Each consumer runs {@code --rounds} times, interleaved; the table shows the median and
 * the spread (min-max), and each median as a ratio to the plain consumer's.
 *
 * <p>Arguments (all optional): {@code --messages 50000 --rounds 3 --prefetch 250 --concurrency 4
 * --host 127.0.0.1 --port 5672 --retry-in-place-ms N} (the last: the {@code RabbitConsumer.Builder.retryInPlace}
 * budget; default the consumer's own). Queues get unique names and are deleted afterwards.
 */
public final class RabbitThroughput {
    private RabbitThroughput() {
    }

    private interface Consumer {
        /** Drains {@code messages} from {@code queue}; returns the nanoseconds it took. */
        long drain(ConnectionFactory factory, String queue, int messages) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        int messages = intArg(args, "--messages", 50_000);
        int rounds = intArg(args, "--rounds", 3);
        int prefetch = intArg(args, "--prefetch", 250);
        int concurrency = intArg(args, "--concurrency", 4);
        // -1: the consumer's default; 0: every retry a copy through the delay queue
        int inPlaceMillis = intArg(args, "--retry-in-place-ms", -1);
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(arg(args, "--host", "127.0.0.1"));
        factory.setPort(intArg(args, "--port", 5672));

        Map<String, Consumer> consumers = new LinkedHashMap<>();
        consumers.put("amqp-client, plain consumer", (f, q, n) -> plain(f, q, n, prefetch));
        consumers.put("Stagger RabbitConsumer, no-op", (f, q, n) -> stagger(f, q, n, prefetch, concurrency, false, inPlaceMillis));
        consumers.put("Stagger, 10% fail once (retried)", (f, q, n) -> stagger(f, q, n, prefetch, concurrency, true, inPlaceMillis));
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        consumers.keySet().forEach(k -> rates.put(k, new ArrayList<>()));

        try (Connection admin = factory.newConnection("rabbit-throughput-admin")) {
            for (int round = 1; round <= rounds; round++) {
                for (Map.Entry<String, Consumer> c : consumers.entrySet()) {
                    String queue = "stagger-bench-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
                    try {
                        fill(admin, queue, messages);
                        long nanos = c.getValue().drain(factory, queue, messages);
                        double rate = messages / (nanos / 1e9);
                        rates.get(c.getKey()).add(rate);
                        System.out.printf(Locale.ROOT, "round %d: %-34s %,10.0f msg/s%n", round, c.getKey(), rate);
                    } finally {
                        delete(admin, queue, queue + ".stagger.delay-10ms", queue + ".stagger.dead");
                    }
                }
            }
        }
        System.out.printf(Locale.ROOT, "%n%d persistent messages, prefetch %d, Stagger concurrency %d, retries in place %s,"
                + " %d round(s)%n", messages, prefetch, concurrency, inPlaceMillis < 0 ? "by default"
                : inPlaceMillis == 0 ? "never" : "up to " + inPlaceMillis + " ms", rounds);
        System.out.printf(Locale.ROOT, "%-34s %14s %22s %10s%n", "consumer", "median msg/s", "spread (min-max)", "vs plain");
        double plain = median(rates.values().iterator().next());
        for (Map.Entry<String, List<Double>> e : rates.entrySet()) {
            List<Double> r = e.getValue();
            System.out.printf(Locale.ROOT, "%-34s %,14.0f %,10.0f-%,-11.0f %9.2fx%n", e.getKey(), median(r),
                    r.stream().mapToDouble(Double::doubleValue).min().orElse(0),
                    r.stream().mapToDouble(Double::doubleValue).max().orElse(0), median(r) / plain);
        }
    }

    private static long plain(ConnectionFactory factory, String queue, int messages, int prefetch) throws Exception {
        CountDownLatch done = new CountDownLatch(messages);
        try (Connection c = factory.newConnection("rabbit-throughput-plain")) {
            Channel ch = c.createChannel();
            ch.basicQos(prefetch);
            long t0 = System.nanoTime();
            ch.basicConsume(queue, false, new DefaultConsumer(ch) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                        throws IOException {
                    getChannel().basicAck(envelope.getDeliveryTag(), false);
                    done.countDown();
                }
            });
            await(done);
            return System.nanoTime() - t0;
        }
    }

    private static long stagger(ConnectionFactory factory, String queue, int messages, int prefetch, int concurrency,
                                boolean failSome, int inPlaceMillis) throws Exception {
        CountDownLatch done = new CountDownLatch(messages);
        RabbitConsumer.Builder builder = RabbitConsumer.builder(queue, factory, m -> {
            if (failSome && m.attempt() == 1 && m.body()[0] == 0) {
                throw new IOException("first attempt fails");
            }
            done.countDown();
        }).policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(List.of(Duration.ofMillis(10))).prefetch(prefetch).concurrency(concurrency);
        if (inPlaceMillis >= 0) {
            builder.retryInPlace(Duration.ofMillis(inPlaceMillis));
        }
        RabbitConsumer consumer = builder.build();
        long t0 = System.nanoTime();
        consumer.start();
        try {
            await(done);
            return System.nanoTime() - t0;
        } finally {
            consumer.close();
        }
    }

    private static void fill(Connection admin, String queue, int messages) throws Exception {
        Channel ch = admin.createChannel();
        ch.queueDeclare(queue, true, false, false, null);
        ch.confirmSelect();
        for (int i = 0; i < messages; i++) {
            byte[] body = new byte[64];
            body[0] = (byte) (i % 10); // the 10 % with 0 fail once in the retry run
            ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().deliveryMode(2).messageId("m-" + i).build(), body);
            if (i % 1_000 == 999) {
                ch.waitForConfirmsOrDie(60_000);
            }
        }
        ch.waitForConfirmsOrDie(60_000);
        ch.close();
    }

    private static void delete(Connection admin, String... queues) throws Exception {
        for (String q : queues) {
            Channel ch = admin.createChannel();
            ch.queueDelete(q);
            ch.close();
        }
    }

    private static void await(CountDownLatch done) throws InterruptedException {
        if (!done.await(10, TimeUnit.MINUTES)) {
            throw new IllegalStateException("not drained in 10 minutes: " + done.getCount() + " left");
        }
    }

    private static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String arg(String[] args, String name, String fallback) {
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }

    private static int intArg(String[] args, String name, int fallback) {
        return Integer.parseInt(arg(args, name, String.valueOf(fallback)));
    }
}
