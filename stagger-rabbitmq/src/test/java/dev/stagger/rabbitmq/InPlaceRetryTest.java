package dev.stagger.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.stagger.Backoff;
import dev.stagger.EndReason;
import dev.stagger.RetryPolicy;
import dev.stagger.rabbitmq.internal.HeaderCodec;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Short retries made in place (no copy published, the original unacknowledged until the retry's
 * outcome is settled), against the real broker (see {@link TestBroker}). The waits run on a
 * {@link VirtualClock}: nothing runs before the test moves it. The only delay level is one minute,
 * so a copy, had one been published, would sit in that level's queue for the whole test.
 */
class InPlaceRetryTest extends ConsumerTestBase {
    private static final List<Duration> ONE_MINUTE = TestBroker.levels(60_000);

    private final VirtualClock clock = new VirtualClock();
    /** What each handler call saw: "attempt/history size". */
    private final List<String> seen = new CopyOnWriteArrayList<>();

    private RetryPolicy fixed(int maxAttempts, long millis) {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofMillis(millis))).build();
    }

    /** A handler that fails every attempt before {@code succeedAt} (0: never succeeds). */
    private MessageHandler failingUntil(int succeedAt) {
        return m -> {
            seen.add(m.attempt() + "/" + m.history().size());
            if (succeedAt == 0 || m.attempt() < succeedAt) {
                throw new IOException("attempt " + m.attempt() + " fails");
            }
        };
    }

    /** Starts a consumer of {@code queue} on the virtual clock, one handler thread, the one-minute level only. */
    private RabbitConsumer startOnClock(String queue, MessageHandler handler, RetryPolicy policy) throws IOException {
        return start(RabbitConsumer.builder(queue, TestBroker.factory(), handler).policy(policy).delayLevels(ONE_MINUTE)
                .clock(clock).concurrency(1));
    }

    /** {@link #startOnClock} on a queue of its own, and one message published whose first retry is then decided. */
    private RabbitConsumer startAndFailOnce(String what, MessageHandler handler, RetryPolicy policy) throws Exception {
        RabbitConsumer consumer = startOnClock(TestBroker.uniqueQueue(what), handler, policy);
        TestBroker.publish(channel, consumer.queue(), what + "-1", "x");
        awaitRetried(1);
        return consumer;
    }

    /**
     * Waits until {@code n} retries are decided and the last one waits on the clock: listeners hear
     * of a retry before its wait is scheduled, and a clock moved in between would leave the wait
     * scheduled from the new time, never due.
     */
    private void awaitRetried(int n) throws Exception {
        Await.until(n + " retries decided, the last waiting on the clock", Duration.ofSeconds(10),
                () -> count(MessageOutcome.RETRIED) == n && clock.pendingTasks() >= 1);
    }

    private String delayQueue(RabbitConsumer consumer) {
        return consumer.delayQueues().get(0);
    }

    @Test
    void aShortRetryRunsAgainAfterItsWaitOnTheClockWithoutACopy() throws Exception {
        RabbitConsumer consumer = startAndFailOnce("inplace", failingUntil(3), fixed(5, 20));
        String queue = consumer.queue();
        assertThat(events(MessageOutcome.RETRIED).get(0).delay()).isEqualTo(Duration.ofMillis(20));

        clock.advance(Duration.ofMillis(19));
        assertThat(clock.pendingTasks()).as("the retry, still waiting on the clock").isEqualTo(1);
        assertThat(seen).containsExactly("1/0");

        clock.advance(Duration.ofMillis(1));
        awaitRetried(2);
        clock.advance(Duration.ofMillis(20));
        Await.until("the third attempt succeeded", Duration.ofSeconds(10), () -> count(MessageOutcome.SUCCEEDED) == 1);

        assertThat(seen).containsExactly("1/0", "2/1", "3/2");
        assertThat(events(MessageOutcome.SUCCEEDED).get(0).attempt()).isEqualTo(3);
        assertThat(TestBroker.messageCount(connection, delayQueue(consumer))).as("no copy published").isZero();
        consumer.close();
        assertThat(TestBroker.messageCount(connection, queue)).as("the original acknowledged").isZero();
    }

    /**
     * Waits of 20 ms with a 50 ms budget: two retries in place, the third (60 ms in all) goes to
     * the delay queue as a copy carrying the attempts made in place and their history.
     */
    @Test
    void aRetryBeyondTheBudgetIsACopyCarryingTheAttemptsMadeInPlace() throws Exception {
        RabbitConsumer consumer = startAndFailOnce("inplace-budget", failingUntil(0), fixed(10, 20));
        String queue = consumer.queue();
        clock.advance(Duration.ofMillis(20));
        awaitRetried(2);
        clock.advance(Duration.ofMillis(20));
        Await.until("the copy in the delay queue", Duration.ofSeconds(10),
                () -> TestBroker.messageCount(connection, delayQueue(consumer)) == 1);

        assertThat(seen).containsExactly("1/0", "2/1", "3/2");
        GetResponse copy = channel.basicGet(delayQueue(consumer), true);
        assertThat(HeaderCodec.attempt(copy.getProps().getHeaders())).isEqualTo(4);
        assertThat(HeaderCodec.history(copy.getProps().getHeaders())).extracting(MessageError::attempt)
                .containsExactly(1, 2, 3);
        Await.until("the third retry told once its copy is confirmed", Duration.ofSeconds(10),
                () -> count(MessageOutcome.RETRIED) == 3);
        assertThat(clock.pendingTasks()).as("nothing left waiting in place").isZero();
    }

    /**
     * Retries without a wait (no backoff): four in place, then a copy through the work queue,
     * four more in place, and so on; the attempt limit holds across both and the dead letter has
     * all ten in its history. The copy is seen by its publish id, which only a published copy has.
     */
    @Test
    void atMostFourRetriesOfADeliveryAreMadeInPlaceAndTheAttemptLimitHolds() throws Exception {
        String queue = TestBroker.uniqueQueue("inplace-cap");
        List<Long> publishIds = new CopyOnWriteArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            calls.incrementAndGet();
            publishIds.add(HeaderCodec.number(m.headers(), MessageHeaders.PUBLISH_ID, -1));
            throw new IOException("attempt " + m.attempt() + " fails");
        }).policy(RetryPolicy.builder().maxAttempts(10).backoff(Backoff.none()).build()).delayLevels(ONE_MINUTE)
                .concurrency(1));
        TestBroker.publish(channel, queue, "c1", "x");
        Await.until("the dead letter", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 1);

        assertThat(calls).hasValue(10);
        assertThat(count(MessageOutcome.RETRIED)).isEqualTo(9);
        assertThat(publishIds.subList(0, 5)).as("the original and four retries in place").containsOnly(-1L);
        assertThat(publishIds.subList(5, 10)).as("one copy and four retries of it in place").doesNotContain(-1L)
                .containsOnly(publishIds.get(5));
        DeadLetter d = DeadLetters.of(connection, queue).list(1).get(0);
        assertThat(d.endReason()).contains("EXHAUSTED");
        assertThat(d.attempts()).isEqualTo(10);
        assertThat(d.history()).extracting(MessageError::attempt).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    }

    /** The deadline counts from the first attempt, in place as in copies: the wait that would pass it is not made. */
    @Test
    void aRetryInPlaceHonoursThePolicysDeadline() throws Exception {
        String queue = TestBroker.uniqueQueue("inplace-deadline");
        start(RabbitConsumer.builder(queue, TestBroker.factory(), failingUntil(0))
                .policy(RetryPolicy.builder().maxAttempts(10).backoff(Backoff.fixed(Duration.ofMillis(20)))
                        .deadline(Duration.ofMillis(30)).build())
                .delayLevels(ONE_MINUTE).clock(clock).concurrency(1));
        TestBroker.publish(channel, queue, "d1", "x");
        awaitRetried(1);
        clock.advance(Duration.ofMillis(20));
        Await.until("the dead letter", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 1);
        assertThat(seen).containsExactly("1/0", "2/1");
        assertThat(events(MessageOutcome.DEAD_LETTERED).get(0).endReason()).contains(EndReason.DEADLINE);
        assertThat(DeadLetters.of(connection, queue).list(1).get(0).attempts()).isEqualTo(2);
    }

    /**
     * A redelivered message may have been retried in place by a consumer that died; its attempts
     * from here on are counted in copies: its retry goes to the delay queue even though it fits.
     */
    @Test
    void aRedeliveredMessageIsNotRetriedInPlace() throws Exception {
        String queue = TestBroker.uniqueQueue("inplace-redelivered");
        channel.queueDeclare(queue, true, false, false, null);
        TestBroker.publish(channel, queue, "r1", "x");
        Channel taker = connection.createChannel(); // takes the message and closes without acknowledging it
        Await.until("the message taken", Duration.ofSeconds(10), () -> taker.basicGet(queue, false) != null);
        TestBroker.close(taker);
        List<Boolean> redelivered = new CopyOnWriteArrayList<>();
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            redelivered.add(m.redelivered());
            throw new IOException("fails");
        }).policy(fixed(5, 20)).delayLevels(ONE_MINUTE).clock(clock).concurrency(1));
        Await.until("the copy in the delay queue", Duration.ofSeconds(10),
                () -> TestBroker.messageCount(connection, delayQueue(consumer)) == 1);
        assertThat(redelivered).containsExactly(true);
        assertThat(HeaderCodec.attempt(channel.basicGet(delayQueue(consumer), true).getProps().getHeaders())).isEqualTo(2);
    }

    /** Closing while a retry waits in place publishes it as its copy: attempt and history kept, the original acknowledged. */
    @Test
    void closingPublishesARetryWaitingInPlaceAsItsCopy() throws Exception {
        RabbitConsumer consumer = startAndFailOnce("inplace-close", failingUntil(0), fixed(5, 20));
        String queue = consumer.queue();
        consumer.close();

        assertThat(seen).containsExactly("1/0");
        assertThat(TestBroker.messageCount(connection, queue)).as("the original acknowledged").isZero();
        assertThat(TestBroker.messageCount(connection, delayQueue(consumer))).isEqualTo(1);
        GetResponse copy = channel.basicGet(delayQueue(consumer), true);
        assertThat(HeaderCodec.attempt(copy.getProps().getHeaders())).isEqualTo(2);
        assertThat(HeaderCodec.history(copy.getProps().getHeaders())).extracting(MessageError::attempt).containsExactly(1);
        assertThat(HeaderCodec.number(copy.getProps().getHeaders(), MessageHeaders.DUE_AT, 0))
                .isEqualTo(clock.currentTimeMillis() + 20);
    }

    /**
     * A retry made in place still running when the shutdown times out: interrupted and returned
     * to the work queue without counting the attempt, as the attempt it is (2), not as the
     * original the broker holds (1).
     */
    @Test
    void aRetryInPlaceInterruptedByTheShutdownGoesBackAsTheAttemptItIs() throws Exception {
        String queue = TestBroker.uniqueQueue("inplace-forced");
        CountDownLatch running = new CountDownLatch(1);
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            seen.add(m.attempt() + "/" + m.history().size());
            if (m.attempt() == 1) {
                throw new IOException("first attempt fails");
            }
            running.countDown();
            new CountDownLatch(1).await(); // only an interrupt ends it
        }).policy(fixed(5, 20)).delayLevels(ONE_MINUTE).clock(clock).concurrency(1)
                .shutdownTimeout(Duration.ofMillis(100)));
        TestBroker.publish(channel, queue, "f1", "x");
        awaitRetried(1);
        clock.advance(Duration.ofMillis(20));
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        consumer.close();

        assertThat(seen).containsExactly("1/0", "2/1");
        assertThat(count(MessageOutcome.RETURNED)).isEqualTo(1);
        Await.until("the retry back in the work queue", Duration.ofSeconds(10),
                () -> TestBroker.messageCount(connection, queue) == 1);
        GetResponse back = channel.basicGet(queue, true);
        assertThat(HeaderCodec.attempt(back.getProps().getHeaders())).isEqualTo(2);
        assertThat(HeaderCodec.history(back.getProps().getHeaders())).extracting(MessageError::attempt).containsExactly(1);
        assertThat(TestBroker.messageCount(connection, queue)).as("the original acknowledged, not returned too").isZero();
    }

    /** With the budget at zero every retry is a copy, as before. */
    @Test
    void aZeroBudgetPublishesEveryRetry() throws Exception {
        String queue = TestBroker.uniqueQueue("inplace-off");
        RabbitConsumer consumer = start(RabbitConsumer.builder(queue, TestBroker.factory(), failingUntil(0))
                .policy(fixed(5, 20)).delayLevels(ONE_MINUTE).clock(clock).concurrency(1).retryInPlace(Duration.ZERO));
        TestBroker.publish(channel, queue, "z1", "x");
        Await.until("the copy in the delay queue", Duration.ofSeconds(10),
                () -> TestBroker.messageCount(connection, delayQueue(consumer)) == 1);
        assertThat(seen).containsExactly("1/0");
    }

    @Test
    void aNegativeBudgetIsRefused() {
        assertThatThrownBy(() -> RabbitConsumer.builder("q", TestBroker.factory(), m -> { })
                .retryInPlace(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("retryInPlace must not be negative");
    }
}
