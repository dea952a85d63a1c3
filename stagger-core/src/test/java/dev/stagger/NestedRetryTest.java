package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Retries inside retries: each failure is retried by one layer, the innermost that saw it. Run
 * twice: starting without frames (how a process runs until a deadline, a refusal or a scope needs
 * them) and, in {@link NestedRetryFramedTest}, with them.
 */
class NestedRetryTest {
    private final VirtualClock clock = new VirtualClock();
    private final AtomicInteger calls = new AtomicInteger();
    private final List<RetryEvent> events = new ArrayList<>();
    private final RetryListener recorder = new RetryListener() {
        @Override
        public void onDeferred(RetryEvent.Deferred event) {
            events.add(event);
        }

        @Override
        public void onCallFinished(RetryEvent.CallFinished event) {
            events.add(event);
        }
    };

    /** Whether calls keep frames as each test starts. */
    boolean framed() {
        return false;
    }

    @BeforeEach
    void frames() {
        Ambient.framed(framed());
    }

    @AfterAll
    static void framesForTheRest() {
        Ambient.framed(true); // as a process that has used deadlines or scopes: the mode other suites may rely on
    }

    private Retry retry(String name, int attempts) {
        return Retry.of(name, RetryPolicy.builder().maxAttempts(attempts).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .abortOn(FileNotFoundException.class).build()).withClock(clock).withListener(recorder);
    }

    private String failing() throws IOException {
        calls.incrementAndGet();
        throw new IOException("reset");
    }

    private EndReason reasonOf(String name) {
        return events.stream().filter(e -> e instanceof RetryEvent.CallFinished && e.name().equals(name))
                .map(e -> ((RetryEvent.CallFinished) e).reason()).findFirst().orElseThrow();
    }

    @Test
    void anOuterRetryDoesNotRetryWhatTheInnerGaveUpOn() {
        Retry outer = retry("service", 5);
        Retry inner = retry("http", 5);

        Throwable thrown = catchThrowable(() -> outer.call(() -> inner.call(this::failing)));

        assertThat(thrown).isInstanceOf(IOException.class).hasMessage("reset");
        assertThat(calls).as("the inner retry's 5 attempts, not 5 x 5").hasValue(5);
        assertThat(reasonOf("http")).isEqualTo(EndReason.EXHAUSTED);
        assertThat(reasonOf("service")).isEqualTo(EndReason.NOT_RETRYABLE);
        assertThat(events).filteredOn(e -> e instanceof RetryEvent.Deferred).singleElement().satisfies(e -> {
            RetryEvent.Deferred d = (RetryEvent.Deferred) e;
            assertThat(d.name()).isEqualTo("service");
            assertThat(d.inner()).isEqualTo("http");
            assertThat(d.innerAttempts()).isEqualTo(5);
            assertThat(d.innerReason()).isEqualTo(EndReason.EXHAUSTED);
            assertThat(d.attempt()).isEqualTo(1);
            assertThat(d.failure()).isSameAs(thrown);
        });
    }

    @Test
    void aFailureTheInnerJudgedNotRetryableIsNotRetriedOutside() {
        // the outer alone would retry it: it retries every exception
        Retry outer = Retry.of("service", RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .build()).withClock(clock).withListener(recorder);
        Retry inner = retry("http", 5);

        Throwable thrown = catchThrowable(() -> outer.call(() -> inner.call(() -> {
            calls.incrementAndGet();
            throw new FileNotFoundException("404");
        })));

        assertThat(thrown).isInstanceOf(FileNotFoundException.class);
        assertThat(calls).hasValue(1);
        assertThat(reasonOf("http")).isEqualTo(EndReason.NOT_RETRYABLE);
    }

    @Test
    void aFailureWrappedAroundTheInnersIsStillTheInnersDecision() {
        Retry outer = retry("service", 5);
        Retry inner = retry("http", 3);

        Throwable thrown = catchThrowable(() -> outer.call(() -> {
            try {
                return inner.call(this::failing);
            } catch (IOException e) {
                throw new IllegalStateException("wrapped", e);
            }
        }));

        assertThat(thrown).isInstanceOf(IllegalStateException.class);
        assertThat(calls).hasValue(3);
    }

    @Test
    void aFailureThrownOutsideTheInnerRetryIsRetriedByTheOuter() throws Exception {
        Retry outer = retry("service", 3);
        Retry inner = retry("http", 5);
        AtomicInteger innerCalls = new AtomicInteger();

        Throwable thrown = catchThrowable(() -> outer.call(() -> {
            inner.call(innerCalls::incrementAndGet); // succeeds
            calls.incrementAndGet();
            throw new IllegalStateException("deadlock");
        }));

        assertThat(thrown).hasMessage("deadlock");
        assertThat(calls).as("the outer retried its own failure").hasValue(3);
        assertThat(innerCalls).hasValue(3);
        assertThat(reasonOf("service")).isEqualTo(EndReason.EXHAUSTED);
    }

    @Test
    void anInnerFailureHandledByTheCodeDoesNotStopTheOuterRetryingItsOwn() {
        Retry outer = retry("service", 3);
        Retry inner = retry("http", 2);

        catchThrowable(() -> outer.call(() -> {
            try {
                inner.call(this::failing);
            } catch (IOException handled) {
                // the code goes on without it
            }
            throw new IllegalStateException("deadlock");
        }));

        assertThat(calls).as("2 inner attempts in each of 3 outer attempts").hasValue(6);
    }

    @Test
    void retryAgainAsksForTheMultiplyingBehaviourExplicitly() {
        Retry outer = retry("service", 3).withNesting(Nesting.RETRY_AGAIN);
        Retry inner = retry("http", 3);

        catchThrowable(() -> outer.call(() -> inner.call(this::failing)));

        assertThat(calls).hasValue(9);
        assertThat(events).noneMatch(e -> e instanceof RetryEvent.Deferred);
    }

    @Test
    void refuseFailsFastNamingBothRetries() {
        Retry outer = retry("service", 3);
        Retry inner = retry("http", 3).withNesting(Nesting.REFUSE);

        Throwable thrown = catchThrowable(() -> outer.call(() -> inner.call(this::failing)));

        assertThat(thrown).isInstanceOf(RetryNestingException.class)
                .hasMessageContaining("'http'").hasMessageContaining("'service'");
        assertThat(((RetryNestingException) thrown).inner()).isEqualTo("http");
        assertThat(((RetryNestingException) thrown).outer()).isEqualTo("service");
        assertThat(calls).as("the operation never ran").hasValue(0);
        assertThat(reasonOf("service")).isEqualTo(EndReason.NOT_RETRYABLE);
        assertThat(clock.sleeps()).isEmpty();
    }

    @Test
    void anOuterThatRefusesNestingRefusesEveryRetryInsideIt() throws Exception {
        Retry outer = retry("service", 3).withNesting(Nesting.REFUSE);
        Retry inner = retry("http", 3);

        Throwable thrown = catchThrowable(() -> outer.call(() -> inner.call(this::failing)));

        assertThat(thrown).isInstanceOf(RetryNestingException.class).hasMessageContaining("retry 'service' refuses");
        assertThat(calls).hasValue(0);
        assertThat(inner.call(() -> "alone")).as("alone, the inner runs").isEqualTo("alone");
    }

    @Test
    void theInnerDeadlineNeverOutlivesTheOuters() {
        Retry outer = Retry.of("service", RetryPolicy.builder().maxAttempts(3).deadline(Duration.ofSeconds(1))
                .backoff(Backoff.fixed(Duration.ofMillis(100))).build()).withClock(clock).withListener(recorder);
        Retry inner = Retry.of("http", RetryPolicy.builder().maxAttempts(20)
                .backoff(Backoff.fixed(Duration.ofMillis(300))).build()).withClock(clock).withListener(recorder);
        List<Duration> remaining = new ArrayList<>();

        catchThrowable(() -> outer.call(() -> inner.call(context -> {
            remaining.add(context.remaining().orElseThrow());
            return failing();
        })));

        assertThat(reasonOf("http")).isEqualTo(EndReason.DEADLINE);
        assertThat(calls).as("attempts at 0, 300, 600 and 900 ms; the next wait ends past 1 s").hasValue(4);
        assertThat(remaining.get(0)).isLessThanOrEqualTo(Duration.ofSeconds(1));
        assertThat(remaining.get(3)).isLessThanOrEqualTo(Duration.ofMillis(100));
        assertThat(clock.now()).isLessThan(Duration.ofSeconds(1));
    }

    @Test
    void asyncNestedRetriesDoNotMultiply() {
        Retry outer = retry("service", 4);
        Retry inner = retry("http", 3);

        CompletableFuture<String> result = outer.callAsync(() -> inner.callAsync(() -> {
            calls.incrementAndGet();
            return CompletableFuture.failedFuture(new IOException("reset"));
        }));
        clock.advance(Duration.ofSeconds(10));

        assertThat(result).isCompletedExceptionally();
        assertThat(calls).as("the inner's 3, not 3 x 4").hasValue(3);
        assertThat(reasonOf("service")).isEqualTo(EndReason.NOT_RETRYABLE);
        assertThat(events).filteredOn(e -> e instanceof RetryEvent.Deferred).singleElement()
                .extracting(e -> ((RetryEvent.Deferred) e).inner()).isEqualTo("http");
    }

    @Test
    void anAsyncOuterRetriesItsOwnFailures() {
        Retry outer = retry("service", 4);
        Retry inner = retry("http", 3);
        AtomicInteger innerCalls = new AtomicInteger();

        CompletableFuture<String> result = outer.callAsync(() -> inner.callAsync(
                () -> CompletableFuture.completedFuture(innerCalls.incrementAndGet()))
                .thenApply(n -> {
                    calls.incrementAndGet();
                    throw new IllegalStateException("after the inner call");
                }));
        clock.advance(Duration.ofSeconds(10));

        assertThat(result).isCompletedExceptionally();
        assertThat(calls).hasValue(4);
        assertThat(reasonOf("service")).isEqualTo(EndReason.EXHAUSTED);
    }

    @Test
    void anAsyncInnerInsideASyncOuterIsTheOneThatRetries() {
        Retry outer = retry("service", 4);
        // on the system clock: the inner's attempts run on its scheduler while the outer's thread joins
        Retry inner = Retry.of("http", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build())
                .withListener(recorder);

        Throwable thrown = catchThrowable(() -> outer.call(() -> inner.callAsync(() -> {
            calls.incrementAndGet();
            return CompletableFuture.<String>failedFuture(new IOException("reset"));
        }).join()));

        assertThat(thrown).isInstanceOf(CompletionException.class).hasCauseInstanceOf(IOException.class);
        assertThat(calls).hasValue(3);
        assertThat(reasonOf("service")).isEqualTo(EndReason.NOT_RETRYABLE);
    }

    @Test
    void retriesOnTheFastPathDoNotMultiplyEither() {
        // no listener, breaker or deadline: both calls take the fast path
        Retry outer = Retry.of("service", RetryPolicy.builder().maxAttempts(4).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .build()).withClock(clock).withoutBudget();
        Retry inner = Retry.of("http", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .build()).withClock(clock).withoutBudget();

        Throwable thrown = catchThrowable(() -> outer.call(() -> inner.call(this::failing)));

        assertThat(thrown).hasMessage("reset");
        assertThat(calls).as("the inner's 3, not 3 x 4").hasValue(3);
    }

    @Test
    void aResultTheInnerGaveUpOnIsTheDecisionForTheFailureMadeOfIt() {
        Retry outer = retry("service", 4);
        Retry inner = Retry.of("http", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .retryOnResult(String.class, "503"::equals).build()).withClock(clock).withListener(recorder);

        Throwable thrown = catchThrowable(() -> outer.call(() -> {
            String status = inner.call(() -> {
                calls.incrementAndGet();
                return "503";
            });
            throw new IllegalStateException("the downstream answered " + status); // as RestClient turns a status into an exception
        }));

        assertThat(thrown).hasMessage("the downstream answered 503");
        assertThat(calls).as("the inner's 3 attempts, not 3 x 4").hasValue(3);
        assertThat(reasonOf("service")).isEqualTo(EndReason.NOT_RETRYABLE);
    }

    @Test
    void aDecisionOfAnEarlierCallOnTheThreadIsNotTakenByALaterOne() {
        Retry inner = Retry.of("http", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .retryOnResult(String.class, "503"::equals).build()).withClock(clock);
        Retry later = Retry.of("service", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .build()).withClock(clock).withoutBudget();
        catchThrowable(() -> retry("earlier", 3).call(() -> inner.call(() -> "503"))); // gave up on a result, handled

        catchThrowable(() -> later.call(() -> {
            calls.incrementAndGet();
            throw new IllegalStateException("deadlock");
        }));

        assertThat(calls).as("the later call retries its own failure").hasValue(3);
    }

    @Test
    void aRetryWithoutAnExplicitBudgetHasTheSharedOneOfItsName() {
        RetryPolicy policy = RetryPolicy.builder().build();
        Retry a = Retry.of("nested-budget-a", policy);

        RetryBudget shared = a.budget().orElseThrow();
        assertThat(shared).isSameAs(Retry.of("nested-budget-a", policy).budget().orElseThrow())
                .isSameAs(RetryBudget.shared("nested-budget-a"));
        assertThat(shared.ratio()).isEqualTo(0.1);
        assertThat(shared.maxTokens()).isEqualTo(100);
        assertThat(shared.minRetriesPerSecond()).isEqualTo(10);
        assertThat(Retry.of("nested-budget-b", policy).budget().orElseThrow()).isNotSameAs(shared);
        assertThat(a.withoutBudget().budget()).isEmpty();
        assertThat(a.withListener(recorder).budget()).as("copies keep it").containsSame(shared);
        RetryBudget own = RetryBudget.of("own");
        assertThat(a.withBudget(own).withClock(clock).budget()).containsSame(own);
    }

    @Test
    void theDefaultBudgetRefusesRetriesOnceSpent() {
        Retry retry = Retry.of("nested-budget-spent", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
                .build()).withClock(clock);
        assertThat(retry.budget().orElseThrow()).isNotSameAs(RetryBudget.shared("nested-budget-spent"));
        int refused = 0;
        for (int i = 0; i < 200; i++) {
            try {
                retry.call(this::failing);
            } catch (BudgetExhaustedException e) {
                refused++;
            } catch (Exception expected) {
                // exhausted
            }
        }
        assertThat(refused).as("100 tokens and the floor's 10, then refusals").isGreaterThan(100);
        assertThat(calls.get()).isLessThan(200 * 3);
    }
}
