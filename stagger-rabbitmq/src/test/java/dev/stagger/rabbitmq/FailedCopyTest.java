package dev.stagger.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import dev.stagger.Backoff;
import dev.stagger.EndReason;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Copies that cannot be published, due times that cannot be right, and re-drives while a
 * consumer runs: none may make a message go round without a wait or without end. Against the
 * real broker (see {@link TestBroker}).
 */
class FailedCopyTest extends ConsumerTestBase {
    /**
     * Fifty failures of 1,000 non-ASCII characters each were about 150 KB of history, more than
     * the broker's frame size: the copy was refused, the original went back at once and ran again
     * at the same attempt, forever. The history is now bounded in bytes (the first entry and the
     * latest that fit), so the message makes its 60 attempts and is dead-lettered.
     */
    @Test
    void aLongErrorHistoryIsCutToItsFirstAndLatestEntriesAndTheMessageEndsAsUsual() throws Exception {
        String queue = TestBroker.uniqueQueue("history");
        String text = "€".repeat(1_000);
        AtomicInteger calls = new AtomicInteger();
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            calls.incrementAndGet();
            throw new IOException(m.attempt() + " " + text);
        }).policy(RetryPolicy.builder().maxAttempts(60).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(FAST_LEVELS).concurrency(1));
        TestBroker.publish(channel, queue, "h1", "x");
        Await.until("the dead letter", Duration.ofSeconds(60), () -> count(MessageOutcome.DEAD_LETTERED) == 1);
        assertThat(calls).hasValue(60);
        assertThat(count(MessageOutcome.RETURNED)).isZero();
        DeadLetter d = DeadLetters.of(connection, queue).list(1).get(0);
        assertThat(d.endReason()).contains("EXHAUSTED");
        assertThat(d.attempts()).isEqualTo(60);
        List<Integer> attempts = d.history().stream().map(MessageError::attempt).toList();
        assertThat(attempts.get(0)).isEqualTo(1);
        assertThat(attempts.get(attempts.size() - 1)).isEqualTo(60);
        assertThat(attempts.size()).isBetween(3, 10);
        for (int i = 2; i < attempts.size(); i++) {
            assertThat(attempts.get(i)).as("the latest entries, in order").isEqualTo(attempts.get(i - 1) + 1);
        }
        assertThat(d.historyDropped()).isEqualTo(60 - attempts.size());
        assertThat(d.history().get(1).message()).startsWith(attempts.get(1) + " €€€");
    }

    /**
     * A delay queue deleted while the consumer runs: the copy came back unroutable and the
     * original went back at once, tens of thousands of times a second. The queues are declared
     * again and the copy goes once more.
     */
    @Test
    void aDelayQueueDeletedWhileConsumingIsDeclaredAgain() throws Exception {
        String queue = TestBroker.uniqueQueue("gone");
        AtomicInteger calls = new AtomicInteger();
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            calls.incrementAndGet();
            if (m.attempt() == 1) {
                throw new IOException("first attempt fails");
            }
        }).policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(FAST_LEVELS).retryInPlace(Duration.ZERO)); // the retry through its delay queue
        for (String q : consumer.delayQueues()) {
            TestBroker.deleteQueues(connection, q);
        }
        TestBroker.publish(channel, queue, "g1", "x");
        Await.until("the retry handled", Duration.ofSeconds(10), () -> count(MessageOutcome.SUCCEEDED) == 1);
        assertThat(calls).hasValue(2);
        assertThat(count(MessageOutcome.RETRIED)).isEqualTo(1);
        assertThat(count(MessageOutcome.RETURNED) + count(MessageOutcome.DEAD_LETTERED)).isZero();
        assertThat(TestBroker.messageCount(connection, consumer.delayQueues().get(0))).as("declared again").isZero();
    }

    /**
     * An application header near the frame size: no copy of the message fits (neither its retry
     * nor its dead letter), so the original goes back to the queue, but only after a wait on the
     * consumer's clock that grows with each consecutive failure, and nothing runs in between.
     */
    @Test
    void aMessageNoCopyOfWhichFitsGoesBackOnlyAfterAGrowingWaitOnTheClock() throws Exception {
        String queue = TestBroker.uniqueQueue("huge");
        VirtualClock clock = new VirtualClock();
        AtomicInteger calls = new AtomicInteger();
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            calls.incrementAndGet();
            throw new IOException("downstream down");
        }).clock(clock).delayLevels(FAST_LEVELS).concurrency(1)
                .retryInPlace(Duration.ZERO)); // every retry a copy: an in-place wait would sit on the virtual clock
        Map<String, Object> headers = new HashMap<>();
        headers.put("app-blob", "b".repeat(127_500)); // fits the frame; with the history, no longer
        channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId("big").headers(headers).build(),
                "x".getBytes(StandardCharsets.UTF_8));

        Await.until("the message returned", Duration.ofSeconds(10), () -> count(MessageOutcome.RETURNED) == 1);
        Duration firstWait = events(MessageOutcome.RETURNED).get(0).delay();
        assertThat(firstWait).isBetween(Duration.ofMillis(50), Duration.ofMillis(100));
        assertThat(clock.pendingTasks()).as("the give-back, waiting on the clock").isEqualTo(1);
        assertThat(TestBroker.messageCount(connection, queue)).as("not back before the wait").isZero();
        assertThat(calls).hasValue(1);

        clock.advance(firstWait);
        Await.until("the second try returned", Duration.ofSeconds(10), () -> count(MessageOutcome.RETURNED) == 2);
        Duration secondWait = events(MessageOutcome.RETURNED).get(1).delay();
        assertThat(secondWait).isBetween(Duration.ofMillis(100), Duration.ofMillis(200));
        assertThat(clock.pendingTasks()).isEqualTo(1);
        assertThat(calls).hasValue(2);
        assertThat(count(MessageOutcome.RETRIED) + count(MessageOutcome.DEAD_LETTERED)).isZero();
    }

    /**
     * A retry whose copy the broker refuses (its delay queue, replaced under the consumer, is full
     * and rejects publishes, so the broker nacks the copy), while a dead letter can be published:
     * the message is dead-lettered with the reason, instead of going back to run again at once.
     */
    @Test
    void aRetryTheBrokerRefusesIsDeadLetteredWithItsReason() throws Exception {
        String queue = TestBroker.uniqueQueue("refused");
        AtomicInteger calls = new AtomicInteger();
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            calls.incrementAndGet();
            throw new IOException("downstream down");
        }).policy(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(TestBroker.levels(10)).retryInPlace(Duration.ZERO)); // the retry through its delay queue
        String delayQueue = consumer.delayQueues().get(0);
        TestBroker.deleteQueues(connection, delayQueue);
        channel.queueDeclare(delayQueue, true, false, false, Map.of("x-max-length", 0, "x-overflow", "reject-publish"));
        TestBroker.publish(channel, queue, "r1", "x");
        Await.until("the dead letter", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 1);
        assertThat(calls).hasValue(1);
        MessageEvent dead = events(MessageOutcome.DEAD_LETTERED).get(0);
        assertThat(dead.endReason()).contains(EndReason.NOT_RETRYABLE);
        DeadLetter d = DeadLetters.of(connection, queue).list(1).get(0);
        assertThat(d.endReason()).contains("NOT_RETRYABLE");
        assertThat(d.cause()).hasValueSatisfying(c -> assertThat(c).startsWith("UNPUBLISHABLE: the retry could not be published"));
        assertThat(d.attempts()).isEqualTo(1);
        assertThat(d.history()).extracting(MessageError::message).containsExactly("downstream down");
    }

    /**
     * A due time 30 days ahead was delayed again in the largest level forever, never handled,
     * never dead-lettered, and no listener heard of it. Past the consumer's maximum delay (1 day
     * by default) it is dead-lettered with the reason, and the handler never runs.
     */
    @Test
    void aDueTimeFurtherAheadThanTheMaximumDelayIsDeadLetteredWithItsReason() throws Exception {
        String queue = TestBroker.uniqueQueue("far");
        AtomicInteger calls = new AtomicInteger();
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> calls.incrementAndGet())
                .policy(RetryPolicy.builder().maxAttempts(5).build()).delayLevels(FAST_LEVELS)); // no deadline
        long now = System.currentTimeMillis();
        publishDue(queue, "f1", now, now + Duration.ofDays(30).toMillis());
        Await.until("the dead letter", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 1);
        assertThat(calls).hasValue(0);
        assertThat(events(MessageOutcome.DEAD_LETTERED).get(0).endReason()).contains(EndReason.NOT_RETRYABLE);
        DeadLetter d = DeadLetters.of(connection, queue).list(1).get(0);
        assertThat(d.endReason()).contains("NOT_RETRYABLE");
        assertThat(d.attempts()).isEqualTo(2);
        assertThat(d.cause()).hasValueSatisfying(c -> assertThat(c).startsWith("DUE_AT_OUT_OF_RANGE: due at ")
                .contains("more than the consumer's maxDelay of 86400000 ms"));
    }

    /** Within the maximum delay but after the policy's deadline from the first attempt: DEADLINE. */
    @Test
    void aDueTimeAfterThePolicysDeadlineIsDeadLetteredAsDeadline() throws Exception {
        String queue = TestBroker.uniqueQueue("late");
        AtomicInteger calls = new AtomicInteger();
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> calls.incrementAndGet())
                .policy(RetryPolicy.builder().maxAttempts(5).deadline(Duration.ofMinutes(10)).build())
                .delayLevels(FAST_LEVELS));
        long now = System.currentTimeMillis();
        publishDue(queue, "l1", now - 1_000, now + Duration.ofHours(1).toMillis());
        Await.until("the dead letter", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 1);
        assertThat(calls).hasValue(0);
        assertThat(events(MessageOutcome.DEAD_LETTERED).get(0).endReason()).contains(EndReason.DEADLINE);
        DeadLetter d = DeadLetters.of(connection, queue).list(1).get(0);
        assertThat(d.endReason()).contains("DEADLINE");
        assertThat(d.cause()).hasValueSatisfying(c -> assertThat(c).startsWith("DUE_AT_OUT_OF_RANGE: ")
                .contains("after the policy's deadline of PT10M"));
    }

    /** A due time within both bounds is still delayed again, not handled early and not dead-lettered. */
    @Test
    void aDueTimeWithinTheBoundsWaitsAsBefore() throws Exception {
        String queue = TestBroker.uniqueQueue("near");
        AtomicInteger calls = new AtomicInteger();
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> calls.incrementAndGet())
                .policy(RetryPolicy.builder().maxAttempts(5).deadline(Duration.ofHours(1)).build())
                .delayLevels(TestBroker.levels(10, 20, 60_000)));
        long now = System.currentTimeMillis();
        publishDue(queue, "n1", now, now + Duration.ofMinutes(30).toMillis());
        Await.until("the message delayed again", Duration.ofSeconds(10),
                () -> TestBroker.messageCount(connection, consumer.delayQueues().get(2)) == 1);
        assertThat(calls).hasValue(0);
        assertThat(count(MessageOutcome.DEAD_LETTERED)).isZero();
    }

    private void publishDue(String queue, String id, long firstAt, long dueAt) throws IOException {
        Map<String, Object> headers = new HashMap<>();
        headers.put(MessageHeaders.ATTEMPT, 2);
        headers.put(MessageHeaders.FIRST_ATTEMPT_AT, firstAt);
        headers.put(MessageHeaders.DUE_AT, dueAt);
        channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId(id).headers(headers).build(),
                "x".getBytes(StandardCharsets.UTF_8));
    }

    /**
     * With a consumer running that fails every message at once, a re-drive took the same messages
     * again as they came back (one call moved 100,000 and each message 100 times). Each dead
     * letter present when the call begins now moves once.
     */
    @Test
    void aReDriveMovesEachDeadLetterPresentAtItsStartOnceWhileTheyFailAgain() throws Exception {
        String queue = TestBroker.uniqueQueue("redrive-once");
        int messages = 200;
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            throw new IOException("still down");
        }).policy(RetryPolicy.builder().maxAttempts(1).build()).delayLevels(FAST_LEVELS).concurrency(8));
        for (int i = 0; i < messages; i++) {
            TestBroker.publish(channel, queue, "m-" + i, "x");
        }
        Await.until("the dead letters", Duration.ofSeconds(30), () -> count(MessageOutcome.DEAD_LETTERED) == messages);
        DeadLetters dead = DeadLetters.of(connection, queue);
        Await.until("all in the dead-letter queue", Duration.ofSeconds(10), () -> dead.count() == messages);

        assertThat(dead.redrive(DeadLetters.MAX_BATCH)).isEqualTo(messages);

        Await.until("the re-driven messages dead again", Duration.ofSeconds(30),
                () -> count(MessageOutcome.DEAD_LETTERED) == 2L * messages);
        Await.until("all back in the dead-letter queue", Duration.ofSeconds(10), () -> dead.count() == messages);
        List<DeadLetter> all = dead.list(DeadLetters.MAX_BATCH);
        assertThat(all).hasSize(messages);
        assertThat(all).extracting(DeadLetter::redrives).containsOnly(1);
        assertThat(all).extracting(d -> d.messageId().orElseThrow()).doesNotHaveDuplicates();
    }
}
