package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link FallbackCache}: what is stored, for how long it may be answered, and how old it says it is. */
class FallbackCacheTest {
    private final VirtualClock clock = new VirtualClock();
    private final FallbackCache<String, String> cache = FallbackCache.<String, String>builder("quotes")
            .maxSize(2).maxStaleness(Duration.ofMinutes(5)).clock(clock).build();
    private final Retry retry = Retry.of("quotes", RetryPolicy.builder().maxAttempts(2)
            .backoff(Backoff.fixed(Duration.ofSeconds(1))).build()).withClock(clock);

    private static String down() throws IOException {
        throw new IOException("down");
    }

    @Test
    void aSuccessIsAnsweredFreshAndStored() throws Exception {
        Cached<String> answer = cache.call(retry, "ACME", () -> "41.50");

        assertThat(answer.isStale()).isFalse();
        assertThat(answer.age()).isZero();
        assertThat(cache.get("ACME")).get().extracting(Cached::value).isEqualTo("41.50");
    }

    @Test
    void aFailedCallAnswersTheStoredValueWithItsAge() throws Exception {
        cache.call(retry, "ACME", () -> "41.50");
        Instant stored = Instant.ofEpochMilli(clock.currentTimeMillis());
        clock.advance(Duration.ofMinutes(2));

        Cached<String> answer = cache.call(retry, "ACME", FallbackCacheTest::down);

        assertThat(answer.value()).isEqualTo("41.50");
        assertThat(answer.isStale()).isTrue();
        assertThat(answer.storedAt()).isEqualTo(stored);
        assertThat(answer.age()).isEqualTo(Duration.ofMinutes(2).plusSeconds(1)); // the retry waited 1 s
    }

    @Test
    void aValueExactlyAsOldAsTheMaximumStalenessIsStillAnswered() throws Exception {
        cache.put("ACME", "41.50");
        clock.advance(Duration.ofMinutes(5).minusSeconds(1)); // plus the retry's 1 s wait: exactly 5 minutes

        assertThat(cache.call(retry, "ACME", FallbackCacheTest::down).age()).isEqualTo(Duration.ofMinutes(5));
    }

    @Test
    void aValueOlderThanTheMaximumStalenessIsNotAnswered() {
        cache.put("ACME", "41.50");
        clock.advance(Duration.ofMinutes(5).minusSeconds(1).plusMillis(1));

        Throwable thrown = catchThrowable(() -> cache.call(retry, "ACME", FallbackCacheTest::down));

        assertThat(thrown).isInstanceOf(IOException.class).hasMessage("down");
        assertThat(cache.get("ACME")).isEmpty();
    }

    @Test
    void theLeastRecentlyUsedKeyIsEvictedBeyondTheMaximumSize() {
        cache.put("A", "1");
        cache.put("B", "2");
        cache.get("A");
        cache.put("C", "3");

        assertThat(cache.size()).isEqualTo(2);
        assertThat(cache.get("B")).isEmpty();
        assertThat(cache.get("A")).isPresent();
        assertThat(cache.get("C")).isPresent();
    }

    @Test
    void aRetriedResultThatRanOutOfAttemptsIsNotStored() throws Exception {
        FallbackCache<String, Integer> statuses = FallbackCache.<String, Integer>builder("statuses").clock(clock).build();
        Retry onResult = Retry.of("status", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofSeconds(1)))
                .retryOnResult(Integer.class, status -> status == 503).build()).withClock(clock);

        Cached<Integer> answer = statuses.call(onResult, "/health", () -> 503);

        assertThat(answer.value()).isEqualTo(503);
        assertThat(answer.staleBecause()).contains(EndReason.EXHAUSTED);
        assertThat(statuses.get("/health")).isEmpty();
    }

    @Test
    void anAsyncFailedCallAnswersTheStoredValue() {
        cache.put("ACME", "41.50");
        clock.advance(Duration.ofMinutes(1));

        var future = cache.callAsync(retry, "ACME",
                () -> java.util.concurrent.CompletableFuture.<String>failedFuture(new IOException("down")));
        clock.runUntilIdle();

        assertThat(future.join().value()).isEqualTo("41.50");
        assertThat(future.join().age()).isEqualTo(Duration.ofMinutes(1).plusSeconds(1));
    }

    @Test
    void anAsyncSuccessIsStored() {
        cache.callAsync(retry, "ACME", () -> java.util.concurrent.CompletableFuture.completedFuture("42.00")).join();

        assertThat(cache.get("ACME")).get().extracting(Cached::value).isEqualTo("42.00");
    }

    @Test
    void aWallClockSteppedBackDoesNotMakeAnOldValueLookNew() {
        FallbackCache<String, String> strict = FallbackCache.<String, String>builder("strict")
                .maxStaleness(Duration.ofSeconds(1)).clock(clock).build();
        strict.put("ACME", "41.50");
        clock.advance(Duration.ofSeconds(3));
        clock.stepWallClock(Duration.ofHours(-1));

        assertThat(strict.get("ACME")).isEmpty();
        assertThat(catchThrowable(() -> strict.call(retry, "ACME", FallbackCacheTest::down)))
                .isInstanceOf(IOException.class);
    }

    @Test
    void agesAreMeasuredOnMonotonicTimeWhileStoredAtShowsTheWallTime() {
        cache.put("ACME", "41.50");
        Instant stored = Instant.ofEpochMilli(clock.currentTimeMillis());
        clock.advance(Duration.ofMinutes(2));
        clock.stepWallClock(Duration.ofHours(-1));
        assertThat(cache.get("ACME")).get().extracting(Cached::age).isEqualTo(Duration.ofMinutes(2));

        clock.stepWallClock(Duration.ofHours(2)); // now an hour ahead of where it was: still 2 minutes old
        Cached<String> hit = cache.get("ACME").orElseThrow();
        assertThat(hit.age()).isEqualTo(Duration.ofMinutes(2));
        assertThat(hit.storedAt()).isEqualTo(stored);
    }

    @Test
    void aSlowCallThatStartedFirstDoesNotOverwriteTheValueOfOneThatStartedAfterIt() {
        CompletableFuture<String> older = new CompletableFuture<>();
        CompletableFuture<String> newer = new CompletableFuture<>();
        CompletableFuture<Cached<String>> first = cache.callAsync(retry, "ACME", () -> older);
        CompletableFuture<Cached<String>> second = cache.callAsync(retry, "ACME", () -> newer);

        newer.complete("42.00"); // the call that started last finishes first
        older.complete("41.50");

        assertThat(second.join().value()).isEqualTo("42.00");
        assertThat(first.join().value()).isEqualTo("41.50"); // each caller gets what its own call fetched
        assertThat(cache.get("ACME")).get().extracting(Cached::value).isEqualTo("42.00");
    }

    @Test
    void aSlowSynchronousCallThatStartedFirstDoesNotOverwriteANewerValue() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Cached<String>> slow = pool.submit(() -> cache.call(retry, "ACME", () -> {
                started.countDown();
                assertThat(finish.await(10, TimeUnit.SECONDS)).isTrue();
                return "41.50";
            }));
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            cache.call(retry, "ACME", () -> "42.00");
            finish.countDown();

            assertThat(slow.get(10, TimeUnit.SECONDS).value()).isEqualTo("41.50");
            assertThat(cache.get("ACME")).get().extracting(Cached::value).isEqualTo("42.00");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theAttemptThatStartedLastHoldsTheNewestValueEvenIfItsCallStartedFirst() {
        CompletableFuture<String> newer = new CompletableFuture<>();
        CompletableFuture<Cached<String>> retried = cache.callAsync(retry, "ACME",
                new java.util.function.Supplier<CompletionStage<String>>() {
                    private int attempts;

                    @Override
                    public CompletionStage<String> get() {
                        return ++attempts == 1 ? CompletableFuture.failedFuture(new IOException("down"))
                                : CompletableFuture.completedFuture("43.00");
                    }
                });
        CompletableFuture<Cached<String>> other = cache.callAsync(retry, "ACME", () -> newer); // starts before the retry
        clock.advance(Duration.ofSeconds(1)); // the retried call's second attempt runs and succeeds
        newer.complete("42.00");

        assertThat(retried.join().value()).isEqualTo("43.00");
        assertThat(other.join().value()).isEqualTo("42.00");
        assertThat(cache.get("ACME")).get().extracting(Cached::value).isEqualTo("43.00");
    }

    @Test
    void aPutReplacesTheValueOfACallThatStartedBeforeIt() {
        CompletableFuture<String> slow = new CompletableFuture<>();
        CompletableFuture<Cached<String>> call = cache.callAsync(retry, "ACME", () -> slow);
        cache.put("ACME", "42.00");
        slow.complete("41.50");

        assertThat(call.join().value()).isEqualTo("41.50");
        assertThat(cache.get("ACME")).get().extracting(Cached::value).isEqualTo("42.00");
    }

    @Test
    void refusesAMaximumStalenessThatIsNotPositive() {
        assertThatThrownBy(() -> FallbackCache.builder("x").maxStaleness(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxStaleness must be positive, got PT0S");
    }
}
