package dev.stagger.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.EndReason;
import dev.stagger.Nesting;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A message handler calling a Stagger retry: a failure the retry inside already decided on is
 * dead-lettered instead of retried again by the consumer (the one-layer rule), unless asked.
 */
class NestedRetryInHandlerTest extends ConsumerTestBase {
    private static final RetryPolicy CONSUMER_POLICY = RetryPolicy.builder().maxAttempts(4).backoff(Backoff.none()).build();

    private final AtomicInteger downstreamCalls = new AtomicInteger();
    /** The inner retry waits on a virtual clock: no real sleeping. */
    private final Retry http = Retry.of("http", RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(100))).build()).withClock(new VirtualClock()).withoutBudget();

    private String callDownstream() throws IOException {
        downstreamCalls.incrementAndGet();
        throw new IOException("503 from downstream");
    }

    @Test
    void aFailureTheInnerRetryGaveUpOnIsDeadLetteredNotRetriedAgain() throws Exception {
        String queue = TestBroker.uniqueQueue("nested");
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> http.call(this::callDownstream))
                .policy(CONSUMER_POLICY).delayLevels(FAST_LEVELS));
        TestBroker.publish(channel, queue, "n1", "x");

        Await.until("the dead letter", Duration.ofSeconds(10), () -> count(MessageOutcome.DEAD_LETTERED) == 1);

        assertThat(downstreamCalls).as("the inner retry's 3 attempts, once").hasValue(3);
        assertThat(count(MessageOutcome.RETRIED)).isZero();
        assertThat(events(MessageOutcome.DEAD_LETTERED)).singleElement()
                .satisfies(e -> assertThat(e.endReason()).contains(EndReason.NOT_RETRYABLE));
        assertThat(DeadLetters.of(connection, queue).list(10)).singleElement().satisfies(d ->
                assertThat(d.cause()).hasValueSatisfying(c -> assertThat(c)
                        .startsWith("DEFERRED: retry 'http' inside the handler decided on the failure (EXHAUSTED after 3")));
    }

    @Test
    void retryAgainLetsTheConsumerRetryIt() throws Exception {
        String queue = TestBroker.uniqueQueue("nested-again");
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> http.call(this::callDownstream))
                .policy(CONSUMER_POLICY).delayLevels(FAST_LEVELS).nesting(Nesting.RETRY_AGAIN));
        TestBroker.publish(channel, queue, "n2", "x");

        Await.until("the dead letter", Duration.ofSeconds(20), () -> count(MessageOutcome.DEAD_LETTERED) == 1);

        assertThat(count(MessageOutcome.RETRIED)).isEqualTo(3);
        assertThat(downstreamCalls).as("3 inner attempts in each of the consumer's 4").hasValue(12);
    }

    @Test
    void refuseIsNotAConsumerSetting() {
        assertThatThrownBy(() -> RabbitConsumer.builder("q", TestBroker.factory(), m -> { }).nesting(Nesting.REFUSE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("REFUSE");
    }
}
