package dev.stagger.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.ConnectionFactory;
import dev.stagger.Backoff;
import dev.stagger.Decision;
import dev.stagger.RetryPolicy;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Against the real broker (see {@link TestBroker}). Times here are the broker's real TTLs, measured, never slept. */
class RabbitConsumerTest extends ConsumerTestBase {
    /** Broker and scheduling latency allowed on a busy machine beyond a retry's level. */
    private static final long LATENCY_SLACK_MILLIS = 1_500;

    @Test
    void acknowledgesAMessageWhoseHandlerReturns() throws Exception {
        String queue = TestBroker.uniqueQueue("ok");
        List<String> seen = new CopyOnWriteList();
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(),
                m -> seen.add(m.id().orElseThrow() + "@" + m.attempt())));
        TestBroker.publish(channel, queue, "m1", "hello");
        Await.until("the message handled", Duration.ofSeconds(10), () -> count(MessageOutcome.SUCCEEDED) == 1);
        consumer.close();
        assertThat(seen).containsExactly("m1@1");
        assertThat(TestBroker.messageCount(connection, queue)).isZero();
    }

    @Test
    void eachRetryArrivesNoEarlierThanItsDelayAndWithinItsLevel() throws Exception {
        String queue = TestBroker.uniqueQueue("timing");
        // retries wait 100, 400, 700 ms: levels 100, 500 and 1000 ms of the default series
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(4)
                .backoff(Backoff.linear(Duration.ofMillis(100), Duration.ofMillis(300))).build();
        long[] arrived = new long[5];
        long[] failed = new long[5];
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            arrived[m.attempt()] = System.nanoTime();
            failed[m.attempt()] = System.nanoTime();
            throw new IOException("attempt " + m.attempt());
        }).policy(policy));
        TestBroker.publish(channel, queue, "t1", "x");
        Await.until("the dead letter", Duration.ofSeconds(20), () -> count(MessageOutcome.DEAD_LETTERED) == 1);
        long[] delays = {0, 100, 400, 700};
        long[] levels = {0, 100, 500, 1000};
        for (int k = 1; k <= 3; k++) {
            long gapMillis = TimeUnit.NANOSECONDS.toMillis(arrived[k + 1] - failed[k]);
            assertThat(gapMillis).as("retry %d", k).isGreaterThanOrEqualTo(delays[k] - 1)
                    .isLessThanOrEqualTo(levels[k] + LATENCY_SLACK_MILLIS);
        }
    }

    /** A failure that asks for a given wait (as a server's Retry-After would). */
    static final class WaitFor extends IOException {
        private static final long serialVersionUID = 1L;
        final Duration wait;

        WaitFor(Duration wait) {
            super("retry after " + wait);
            this.wait = wait;
        }
    }

    @Test
    void aShortRetryIsNotHeldBehindALongOne() throws Exception {
        String queue = TestBroker.uniqueQueue("hol");
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
                .classifier((r, f, c) -> f instanceof WaitFor w ? Decision.retryAfter(w.wait) : Decision.stop()).build();
        Map<String, Long> failedAt = new ConcurrentHashMap<>();
        List<String> secondAttempts = new CopyOnWriteList();
        Map<String, Long> gap = new ConcurrentHashMap<>();
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            String id = m.id().orElseThrow();
            if (m.attempt() == 1) {
                failedAt.put(id, System.nanoTime());
                throw new WaitFor(id.equals("long") ? Duration.ofSeconds(3) : Duration.ofMillis(50));
            }
            gap.put(id, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failedAt.get(id)));
            secondAttempts.add(id);
        }).policy(policy).concurrency(1).retryInPlace(Duration.ZERO)); // both through their delay queues
        TestBroker.publish(channel, queue, "long", "l");
        Await.until("the long retry scheduled", Duration.ofSeconds(10), () -> count(MessageOutcome.RETRIED) == 1);
        TestBroker.publish(channel, queue, "short", "s");
        Await.until("both retried", Duration.ofSeconds(20), () -> secondAttempts.size() == 2);
        assertThat(secondAttempts).containsExactly("short", "long");
        assertThat(gap.get("short")).isBetween(50L, 50 + LATENCY_SLACK_MILLIS);
        assertThat(gap.get("long")).isGreaterThanOrEqualTo(3_000L);
    }

    /**
     * The consumer thread never sleeps: a retry due in minutes is a copy waiting in a delay queue
     * on the broker, not a wait on a thread or an unacknowledged delivery. With one handler thread
     * and a prefetch of one, a message published after another's first attempt failed with a
     * five-minute backoff is handled within seconds, the retry's copy is in the 5-minute delay
     * queue, and the handler thread and the connection's dispatch threads are idle in their pools.
     * (Unlike {@link #aShortRetryIsNotHeldBehindALongOne}, which compares two retries' delays,
     * this holds a fresh message against a pending retry far longer than the test runs.)
     */
    @Test
    void aRetryDueInMinutesHoldsNoThreadAndNoPrefetchSlot() throws Exception {
        String queue = TestBroker.uniqueQueue("nosleep");
        String dispatchPrefix = "test-dispatch-" + queue + "-";
        String handlerPrefix = "stagger-rabbitmq-" + queue + "-";
        AtomicInteger dispatchThreads = new AtomicInteger();
        ExecutorService dispatch = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, dispatchPrefix + dispatchThreads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        ConnectionFactory factory = TestBroker.factory();
        factory.setSharedExecutor(dispatch); // the amqp-client threads that call handleDelivery
        List<String> handled = new CopyOnWriteList();
        RabbitConsumer consumer = null;
        try {
            consumer = start(RabbitConsumer.builder(queue, factory, m -> {
                handled.add(m.id().orElseThrow() + "@" + m.attempt());
                if (m.id().orElseThrow().equals("slow")) {
                    throw new IOException("downstream down");
                }
            }).policy(RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofMinutes(5))).build())
                    .concurrency(1).prefetch(1));
            TestBroker.publish(channel, queue, "slow", "x");
            Await.until("the slow message's retry scheduled", Duration.ofSeconds(10),
                    () -> count(MessageOutcome.RETRIED) == 1);

            TestBroker.publish(channel, queue, "next", "y");
            Await.until("the next message handled while the retry waits (5 minutes)", Duration.ofSeconds(10),
                    () -> count(MessageOutcome.SUCCEEDED) == 1);

            assertThat(handled).containsExactly("slow@1", "next@1");
            assertThat(TestBroker.messageCount(connection, queue + ".stagger.delay-300000ms"))
                    .as("the retry's copy, waiting on the broker").isEqualTo(1);
            assertThat(TestBroker.messageCount(connection, queue)).isZero();
            Await.until("the handler and dispatch threads idle in their pools", Duration.ofSeconds(10),
                    () -> allIdle(handlerPrefix) && allIdle(dispatchPrefix));
            assertThat(handled).as("no second attempt yet").hasSize(2);
        } finally {
            if (consumer != null) {
                consumer.close(); // before its dispatch executor stops
            }
            dispatch.shutdownNow();
        }
    }

    /**
     * Whether there are threads named {@code prefix...} and every one waits, untimed, for a task
     * in its pool (not asleep, not waiting with a timeout, not running).
     */
    private static boolean allIdle(String prefix) {
        boolean any = false;
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            if (!e.getKey().getName().startsWith(prefix)) {
                continue;
            }
            any = true;
            boolean inGetTask = java.util.Arrays.stream(e.getValue()).anyMatch(f ->
                    f.getClassName().equals("java.util.concurrent.ThreadPoolExecutor") && f.getMethodName().equals("getTask"));
            if (e.getKey().getState() != Thread.State.WAITING || !inGetTask) {
                return false;
            }
        }
        return any;
    }

    @Test
    void theLastAllowedAttemptGoesToTheDeadLetterQueueWithItsWholeHistory() throws Exception {
        String queue = TestBroker.uniqueQueue("exhausted");
        AtomicInteger calls = new AtomicInteger();
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            calls.incrementAndGet();
            throw new IOException("boom " + m.attempt());
        }).policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(FAST_LEVELS));
        TestBroker.publish(channel, queue, "d1", "x");
        Await.until("the dead letter", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 1);
        List<DeadLetter> dead = DeadLetters.of(connection, queue).list(10);
        assertThat(calls).hasValue(3);
        assertThat(count(MessageOutcome.RETRIED)).isEqualTo(2);
        assertThat(dead).hasSize(1);
        DeadLetter d = dead.get(0);
        assertThat(d.messageId()).contains("d1");
        assertThat(d.attempts()).isEqualTo(3);
        assertThat(d.endReason()).contains("EXHAUSTED");
        assertThat(d.deadAt()).isPresent();
        assertThat(d.history()).extracting(MessageError::attempt).containsExactly(1, 2, 3);
        assertThat(d.history()).extracting(MessageError::message).containsExactly("boom 1", "boom 2", "boom 3");
        assertThat(d.history()).extracting(MessageError::exceptionClass).containsOnly(IOException.class.getName());
        // listing leaves the message in place
        assertThat(TestBroker.messageCount(connection, consumer.deadLetterQueue())).isEqualTo(1);
    }

    @Test
    void aPermanentFailureGoesToTheDeadLetterQueueAtOnce() throws Exception {
        String queue = TestBroker.uniqueQueue("permanent");
        AtomicInteger calls = new AtomicInteger();
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            calls.incrementAndGet();
            throw new IllegalArgumentException("malformed order");
        }).policy(RetryPolicy.builder().maxAttempts(5).abortOn(IllegalArgumentException.class).build())
                .delayLevels(FAST_LEVELS));
        TestBroker.publish(channel, queue, "p1", "x");
        Await.until("the dead letter", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 1);
        DeadLetter d = DeadLetters.of(connection, queue).list(10).get(0);
        assertThat(calls).hasValue(1);
        assertThat(count(MessageOutcome.RETRIED)).isZero();
        assertThat(d.endReason()).contains("NOT_RETRYABLE");
        assertThat(d.attempts()).isEqualTo(1);
        assertThat(d.history()).extracting(MessageError::message).containsExactly("malformed order");
    }

    @Test
    void aReDrivenDeadLetterStartsItsAttemptsOverAndKeepsItsHistory() throws Exception {
        String queue = TestBroker.uniqueQueue("redrive");
        AtomicBoolean fixed = new AtomicBoolean();
        List<String> seen = new CopyOnWriteList();
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            if (!fixed.get()) {
                throw new IOException("downstream down");
            }
            seen.add("attempt " + m.attempt() + ", history " + m.history().size() + ", redrives "
                    + m.headers().get(MessageHeaders.REDRIVES));
        }).policy(RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(FAST_LEVELS));
        TestBroker.publish(channel, queue, "r1", "x");
        Await.until("the dead letter", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 1);
        fixed.set(true);
        DeadLetters dead = DeadLetters.of(connection, queue);
        assertThat(dead.redrive(10)).isEqualTo(1);
        Await.until("the re-driven message handled", Duration.ofSeconds(10), () -> seen.size() == 1);
        assertThat(seen).containsExactly("attempt 1, history 2, redrives 1");
        assertThat(dead.count()).isZero();
        assertThat(TestBroker.messageCount(connection, consumer.queue())).isZero();
    }

    @Test
    void purgeEmptiesTheDeadLetterQueue() throws Exception {
        String queue = TestBroker.uniqueQueue("purge");
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            throw new IllegalStateException("no");
        }).policy(RetryPolicy.builder().maxAttempts(1).build()).delayLevels(FAST_LEVELS));
        TestBroker.publish(channel, queue, "a", "x");
        TestBroker.publish(channel, queue, "b", "x");
        Await.until("two dead letters", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 2);
        DeadLetters dead = DeadLetters.of(connection, queue);
        assertThat(dead.purge()).isEqualTo(2);
        assertThat(dead.count()).isZero();
    }

    @Test
    void closingLetsTheRunningHandlerFinishAndReturnsTheMessagesNotStarted() throws Exception {
        String queue = TestBroker.uniqueQueue("graceful");
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            if (m.id().orElseThrow().equals("first")) {
                running.countDown();
                release.await();
            }
        }).concurrency(1).prefetch(4).delayLevels(FAST_LEVELS));
        channel.confirmSelect(); // an empty queue then means delivered, not yet to arrive
        TestBroker.publish(channel, queue, "first", "x");
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        for (int i = 0; i < 3; i++) {
            TestBroker.publish(channel, queue, "later-" + i, "x");
        }
        channel.waitForConfirmsOrDie(10_000);
        Await.until("the later messages prefetched", Duration.ofSeconds(10),
                () -> TestBroker.messageCount(connection, queue) == 0);
        Thread closer = new Thread(consumer::close);
        closer.start();
        Await.until("the consumer closing", Duration.ofSeconds(10), () -> closer.getState() == Thread.State.TIMED_WAITING);
        release.countDown();
        closer.join(20_000);
        assertThat(count(MessageOutcome.SUCCEEDED)).isEqualTo(1);
        assertThat(count(MessageOutcome.RETURNED)).isEqualTo(3);
        Await.until("the returned messages back in the queue", Duration.ofSeconds(10),
                () -> TestBroker.messageCount(connection, queue) == 3);
    }

    @Test
    void aHandlerStillRunningAtTheShutdownTimeoutIsInterruptedAndItsMessageReturnedWithoutCountingTheAttempt()
            throws Exception {
        String queue = TestBroker.uniqueQueue("forced");
        CountDownLatch running = new CountDownLatch(1);
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            running.countDown();
            new CountDownLatch(1).await(); // never released: only an interrupt ends it
        }).concurrency(1).shutdownTimeout(Duration.ofMillis(100)).delayLevels(FAST_LEVELS));
        TestBroker.publish(channel, queue, "stuck", "x");
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        consumer.close();
        assertThat(count(MessageOutcome.RETURNED)).isEqualTo(1);
        assertThat(count(MessageOutcome.RETRIED) + count(MessageOutcome.DEAD_LETTERED)).isZero();
        Await.until("the message back in the queue", Duration.ofSeconds(10),
                () -> TestBroker.messageCount(connection, queue) == 1);
        assertThat(new String(channel.basicGet(queue, true).getBody(), StandardCharsets.UTF_8)).isEqualTo("x");
    }

    /** A thread-safe list for handler threads. */
    private static final class CopyOnWriteList extends java.util.concurrent.CopyOnWriteArrayList<String> {
        private static final long serialVersionUID = 1L;
    }
}
