package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link RetryListener#forCall} and {@link RetryListener#onAttemptStarting}: per-call listeners, a scope around each attempt. */
class RetryListenerScopeTest {
    private final VirtualClock clock = new VirtualClock();
    private final AtomicInteger calls = new AtomicInteger();
    private final List<String> log = new ArrayList<>();

    /** Makes one {@link PerCall} per call; logs what each hears and where the operation ran. */
    private final class Tracing implements RetryListener {
        int made;

        @Override
        public RetryListener forCall(Retry retry) {
            made++;
            return new PerCall("call" + made + "[" + retry.name() + "]");
        }

        @Override
        public void onCallFinished(RetryEvent.CallFinished event) {
            log.add("shared listener heard the end"); // never: the per-call one hears it instead
        }
    }

    private final class PerCall implements RetryListener {
        final String id;
        String open;

        PerCall(String id) {
            this.id = id;
        }

        @Override
        public Scope onAttemptStarting(String name, int attempt) {
            open = id + "/attempt" + attempt;
            log.add("open " + open);
            return () -> {
                log.add("close " + open);
                open = null;
            };
        }

        @Override
        public void onAttemptFinished(RetryEvent.AttemptFinished event) {
            log.add("finished " + id + "/attempt" + event.attempt() + " open=" + open);
        }

        @Override
        public void onCallFinished(RetryEvent.CallFinished event) {
            log.add("end " + id + " " + event.reason());
        }
    }

    private Retry retry(Tracing tracing) {
        return Retry.of("scoped", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofSeconds(1))).build())
                .withClock(clock).withListener(tracing);
    }

    @Test
    void eachSyncAttemptRunsInsideTheScopeItsCallsListenerOpened() throws Exception {
        Tracing tracing = new Tracing();
        Retry retry = retry(tracing);
        List<String> seenInside = new ArrayList<>();

        String result = retry.call(() -> {
            seenInside.add(log.get(log.size() - 1));
            if (calls.incrementAndGet() < 3) {
                throw new IOException("down");
            }
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(seenInside).containsExactly("open call1[scoped]/attempt1", "open call1[scoped]/attempt2",
                "open call1[scoped]/attempt3");
        assertThat(log).containsExactly(
                "open call1[scoped]/attempt1", "close call1[scoped]/attempt1", "finished call1[scoped]/attempt1 open=null",
                "open call1[scoped]/attempt2", "close call1[scoped]/attempt2", "finished call1[scoped]/attempt2 open=null",
                "open call1[scoped]/attempt3", "close call1[scoped]/attempt3", "finished call1[scoped]/attempt3 open=null",
                "end call1[scoped] RECOVERED");

        log.clear();
        retry.call(() -> "again");
        assertThat(tracing.made).as("a listener per call").isEqualTo(2);
        assertThat(log).containsExactly("open call2[scoped]/attempt1", "close call2[scoped]/attempt1",
                "finished call2[scoped]/attempt1 open=null", "end call2[scoped] SUCCESS");
    }

    @Test
    void anAsyncAttemptsScopeLastsWhileTheOperationStartsIt() {
        Retry retry = retry(new Tracing());
        List<String> seenInside = new ArrayList<>();

        CompletableFuture<String> future = retry.callAsync(() -> {
            seenInside.add(log.get(log.size() - 1));
            return calls.incrementAndGet() < 2 ? CompletableFuture.failedFuture(new IOException("down"))
                    : CompletableFuture.completedFuture("ok");
        });
        clock.advance(Duration.ofSeconds(1));

        assertThat(future).isCompletedWithValue("ok");
        assertThat(seenInside).containsExactly("open call1[scoped]/attempt1", "open call1[scoped]/attempt2");
        assertThat(log).containsExactly(
                "open call1[scoped]/attempt1", "close call1[scoped]/attempt1", "finished call1[scoped]/attempt1 open=null",
                "open call1[scoped]/attempt2", "close call1[scoped]/attempt2", "finished call1[scoped]/attempt2 open=null",
                "end call1[scoped] RECOVERED");
    }

    @Test
    void anAttemptTheBreakerRefusesOpensNoScope() throws Exception {
        CircuitBreaker breaker = CircuitBreaker.builder("b").build();
        breaker.forceOpen();
        Retry retry = retry(new Tracing()).withCircuitBreaker(breaker);

        try {
            retry.call(() -> "never");
        } catch (CircuitOpenException expected) {
            // the call is refused before its first attempt
        }

        assertThat(log).containsExactly("end call1[scoped] CIRCUIT_OPEN");
    }

    @Test
    void aThrowingHookLeavesTheCallAlone() throws Exception {
        Retry retry = Retry.of("rude", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).build())
                .withListener(new RetryListener() {
                    @Override
                    public RetryListener forCall(Retry r) {
                        throw new IllegalStateException("forCall");
                    }

                    @Override
                    public Scope onAttemptStarting(String name, int attempt) {
                        if (attempt == 1) {
                            throw new IllegalStateException("starting");
                        }
                        return () -> {
                            throw new IllegalStateException("close");
                        };
                    }
                });

        String result = retry.call(() -> {
            if (calls.incrementAndGet() < 2) {
                throw new IOException("down");
            }
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(calls).hasValue(2);
    }
}
