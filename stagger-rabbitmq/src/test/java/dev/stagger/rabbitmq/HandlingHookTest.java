package dev.stagger.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.rabbitmq.TestBroker;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link MessageListener#onHandling} against the real broker (see {@link TestBroker}): the scope a
 * listener opens is open on the handler's thread while the handler runs, for every attempt, and
 * closed as it returns, before the outcome is told.
 */
class HandlingHookTest extends ConsumerTestBase {
    private static final ThreadLocal<String> OPEN = new ThreadLocal<>();

    @Test
    void theListenersScopeIsOpenOnTheHandlersThreadForEveryAttemptAndClosedBeforeTheOutcome() throws Exception {
        String queue = TestBroker.uniqueQueue("hook");
        List<String> trail = new CopyOnWriteArrayList<>();
        MessageListener hook = new MessageListener() {
            @Override
            public void onMessage(MessageEvent event) {
                trail.add("told " + event.outcome() + " " + event.attempt());
            }

            @Override
            public RetryListener.Scope onHandling(Message message) {
                OPEN.set(message.id().orElseThrow() + "@" + message.attempt());
                return () -> {
                    trail.add("closed " + OPEN.get());
                    OPEN.remove();
                };
            }
        };
        start(RabbitConsumer.builder(queue, TestBroker.factory(), m -> {
            trail.add("handler saw " + OPEN.get());
            if (m.attempt() < 3) {
                throw new IOException("attempt " + m.attempt());
            }
        }).policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .delayLevels(FAST_LEVELS).messageListener(hook));
        TestBroker.publish(channel, queue, "h1", "x");
        Await.until("the message handled", Duration.ofSeconds(20), () -> count(MessageOutcome.SUCCEEDED) == 1);

        // a RETRIED outcome is told when the broker confirms the copy, on another thread: it may come
        // after the copy's next attempt started, but never before its own scope closed
        assertThat(trail).hasSize(9);
        for (int attempt = 1; attempt <= 3; attempt++) {
            int saw = trail.indexOf("handler saw h1@" + attempt);
            int closed = trail.indexOf("closed h1@" + attempt);
            int told = trail.indexOf("told " + (attempt < 3 ? "RETRIED " : "SUCCEEDED ") + attempt);
            assertThat(saw).as("attempt %d ran inside its scope", attempt).isNotNegative();
            assertThat(closed).as("attempt %d's scope closed as the handler returned", attempt).isEqualTo(saw + 1);
            assertThat(told).as("attempt %d told after its scope closed", attempt).isGreaterThan(closed);
        }
    }
}
