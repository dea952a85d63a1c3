package dev.stagger.shedding;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.idempotency.Claim;
import dev.stagger.idempotency.IdempotencyRecord;
import dev.stagger.idempotency.IdempotencyScope;
import dev.stagger.idempotency.IdempotencyStore;
import dev.stagger.idempotency.InMemoryIdempotencyStore;
import dev.stagger.idempotency.RequestFingerprint;
import dev.stagger.idempotency.StoredResponse;
import dev.stagger.idempotency.servlet.IdempotencyFilter;
import dev.stagger.shedding.overload.LoopbackServer;
import dev.stagger.shedding.support.Gate;
import dev.stagger.testsupport.Await;
import jakarta.servlet.Filter;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The shedding filter and the idempotency filter in one real Jetty chain, in both orders, with
 * the only slot of a limit of 1 held by a request that waits in the handler.
 */
class IdempotencyChainTest {
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final Gate release = new Gate();
    private final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();
    private final CountingStore store = new CountingStore(new InMemoryIdempotencyStore());
    private final LoadSheddingFilter shedding = LoadSheddingFilter.builder("orders").limit(Limit.fixed(1)).build();
    private LoopbackServer server;

    @AfterEach
    void stop() throws Exception {
        release.open();
        if (server != null) {
            server.close();
        }
    }

    private void start(Filter... filters) throws Exception {
        server = LoopbackServer.start((request, response) -> {
            String key = request.getHeader("Idempotency-Key");
            executions.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            if (request.getRequestURI().equals("/hold")) {
                release.pass();
            }
            response.setStatus(201);
            response.setContentType("text/plain");
            response.getWriter().write("order for " + key);
        }, filters);
    }

    private IdempotencyFilter idempotencyFilter(boolean storeServerErrors) {
        return IdempotencyFilter.builder(store).scopeResolver(request -> Optional.of("tenant-a"))
                .storeServerErrors(storeServerErrors).build();
    }

    private CompletableFuture<HttpResponse<String>> holdTheOnlySlot() throws InterruptedException {
        CompletableFuture<HttpResponse<String>> held = CLIENT.sendAsync(requestTo("/hold", "\"holder\""),
                HttpResponse.BodyHandlers.ofString());
        Await.until("the holder in flight", () -> shedding.inFlight() == 1);
        // in the handler, so past both filters (its key claimed whichever comes first)
        Await.until("the holder in the handler", () -> executions.containsKey("\"holder\""));
        return held;
    }

    private HttpRequest requestTo(String path, String key) {
        return HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(20))
                .header("Idempotency-Key", key).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"42\"}")).build();
    }

    @Test
    void behindTheIdempotencyFilterAShedRequestLeavesItsKeyFreeAndItsRetryRuns() throws Exception {
        start(idempotencyFilter(false), shedding);
        CompletableFuture<HttpResponse<String>> held = holdTheOnlySlot();

        HttpResponse<String> shed = send("/orders", "\"b\"");
        assertThat(shed.statusCode()).isEqualTo(503);
        assertThat(shed.headers().firstValue("Retry-After")).isPresent();
        assertThat(store.released.get()).isEqualTo(1); // the 5xx rule released the key "b"

        release.open();
        held.get(20, TimeUnit.SECONDS);
        Await.until("the holder released", () -> shedding.inFlight() == 0);
        HttpResponse<String> retried = send("/orders", "\"b\"");
        assertThat(retried.statusCode()).isEqualTo(201); // not 409 (key still locked), not the 503 again
        assertThat(retried.headers().firstValue("Idempotent-Replayed")).isEmpty();
        HttpResponse<String> repeated = send("/orders", "\"b\"");
        assertThat(repeated.statusCode()).isEqualTo(201);
        assertThat(repeated.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(executions.get("\"b\"").get()).isEqualTo(1);
    }

    @Test
    void behindTheIdempotencyFilterAReplayIsServedWhileTheLimitIsFull() throws Exception {
        start(idempotencyFilter(false), shedding);
        assertThat(send("/orders", "\"c\"").statusCode()).isEqualTo(201);
        holdTheOnlySlot();

        HttpResponse<String> replay = send("/orders", "\"c\"");

        assertThat(replay.statusCode()).isEqualTo(201);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(shedding.firstAttemptsShed()).isZero();
    }

    @Test
    void inFrontOfTheIdempotencyFilterAShedRequestNeverReachesTheStore() throws Exception {
        start(shedding, idempotencyFilter(false));
        CompletableFuture<HttpResponse<String>> held = holdTheOnlySlot();
        int claims = store.claims.get();

        assertThat(send("/orders", "\"d\"").statusCode()).isEqualTo(503);
        assertThat(store.claims.get()).isEqualTo(claims);

        release.open();
        held.get(20, TimeUnit.SECONDS);
        Await.until("the holder released", () -> shedding.inFlight() == 0);
        assertThat(send("/orders", "\"d\"").statusCode()).isEqualTo(201);
    }

    /**
     * A shed 503 says the request was not processed: even an idempotency filter that stores 5xx
     * responses releases the key, so the retry runs instead of getting the 503 replayed.
     */
    @Test
    void behindAnIdempotencyFilterThatStoresServerErrorsTheShed503IsStillNotReplayed() throws Exception {
        start(idempotencyFilter(true), shedding);
        CompletableFuture<HttpResponse<String>> held = holdTheOnlySlot();
        assertThat(send("/orders", "\"e\"").statusCode()).isEqualTo(503);
        release.open();
        held.get(20, TimeUnit.SECONDS);
        Await.until("the holder released", () -> shedding.inFlight() == 0);

        HttpResponse<String> retried = send("/orders", "\"e\"");

        assertThat(retried.statusCode()).isEqualTo(201);
        assertThat(retried.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(executions.get("\"e\"").get()).isEqualTo(1);
    }

    private HttpResponse<String> send(String path, String key) throws Exception {
        return CLIENT.send(requestTo(path, key), HttpResponse.BodyHandlers.ofString());
    }

    /** Counts what reaches the store. */
    private static final class CountingStore implements IdempotencyStore {
        private final IdempotencyStore delegate;
        final AtomicInteger claims = new AtomicInteger();
        final AtomicInteger released = new AtomicInteger();

        CountingStore(IdempotencyStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public Claim claim(IdempotencyScope scope, RequestFingerprint fingerprint, Duration lease, Duration expiry) {
            claims.incrementAndGet();
            return delegate.claim(scope, fingerprint, lease, expiry);
        }

        @Override
        public boolean complete(IdempotencyScope scope, String leaseToken, StoredResponse response, Duration expiry) {
            return delegate.complete(scope, leaseToken, response, expiry);
        }

        @Override
        public boolean release(IdempotencyScope scope, String leaseToken) {
            released.incrementAndGet();
            return delegate.release(scope, leaseToken);
        }

        @Override
        public Optional<IdempotencyRecord> find(IdempotencyScope scope) {
            return delegate.find(scope);
        }

        @Override
        public int purgeExpired(int batchSize) {
            return delegate.purgeExpired(batchSize);
        }
    }
}
