package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.Backoff;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.http.RetryingHttpClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Panel 4, the client side: a naive client retries the POST and charges twice; Stagger's client
 * sends one Idempotency-Key on every attempt, the shop's idempotency filter replays the stored
 * answer, and the card is charged once. Also: a 400 retried is the same 400 every time.
 */
final class PaymentLab {
    private static final int ATTEMPTS = 4;
    /** Every request to the shop is bounded, so a stuck connection cannot hold a page request forever. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final PaymentShop server;
    private final URI shop;
    private final HttpClient http;
    private final AtomicLong payments = new AtomicLong();

    /** @param shop the shop's base URI, ending in {@code /shop/} */
    PaymentLab(PaymentShop server, URI shop, HttpClient http) {
        this.server = server;
        this.shop = shop;
        this.http = http;
    }

    record PayResult(String payment, boolean withKey, int attempts, long charges, List<String> log,
                     @Nullable String key) {
    }

    PayResult pay(JsonNode r) throws Exception {
        boolean withKey = Json.boolField(r, "withKey", true);
        String payment = "p" + payments.incrementAndGet();
        URI uri = shop.resolve("charge?payment=" + payment);
        List<String> log = new CopyOnWriteArrayList<>();
        List<String> keys = new CopyOnWriteArrayList<>();
        RetryListener attempts = new RetryListener() {
            @Override
            public void onAttemptFinished(RetryEvent.AttemptFinished e) {
                String outcome = Timeline.describe(e.result(), e.failure());
                if (e.result() instanceof HttpResponse<?> resp) {
                    outcome += resp.headers().firstValue("Idempotent-Replayed").map(v -> " (replayed: " + resp.body() + ")")
                            .orElse(" " + resp.body());
                    resp.request().headers().firstValue("Idempotency-Key").ifPresent(keys::add);
                }
                log.add(outcome);
            }
        };
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(REQUEST_TIMEOUT).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":4200,\"currency\":\"EUR\"}")).build();
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(ATTEMPTS).backoff(Backoff.fixed(Duration.ofMillis(50))).build();
        try {
            if (withKey) {
                // the shop runs an idempotency filter: it honours keys, so retrying a keyed POST after a 5xx is safe
                RetryingHttpClient client = RetryingHttpClient.builder(http).service("shop").policy(policy)
                        .keysHonoured(shopUri -> true).listener(attempts).build();
                client.send(request, HttpResponse.BodyHandlers.ofString());
            } else {
                // the naive client: "it failed, so send it again"
                Retry.of("naive", policy).withListener(attempts).call(() -> http.send(request, HttpResponse.BodyHandlers.ofString()));
            }
        } catch (IOException gaveUp) {
            log.add("gave up: " + gaveUp);
        }
        return new PayResult(payment, withKey, log.size(), server.charges(payment), List.copyOf(log), keys.isEmpty() ? null : keys.get(0));
    }

    record BadRequestResult(List<Integer> naive, int staggerAttempts, String staggerReason) {
    }

    BadRequestResult badRequest(JsonNode r) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(shop.resolve("charge/bad")).timeout(REQUEST_TIMEOUT).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":4200}")).build();
        List<Integer> naive = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            naive.add(http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode());
        }
        EndReason[] reason = {null};
        int[] made = {0};
        RetryingHttpClient client = RetryingHttpClient.builder(http).service("shop")
                .policy(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofMillis(50))).build())
                .listener(new RetryListener() {
                    @Override
                    public void onCallFinished(RetryEvent.CallFinished e) {
                        reason[0] = e.reason();
                        made[0] = e.attempts();
                    }
                }).build();
        client.send(request, HttpResponse.BodyHandlers.discarding());
        return new BadRequestResult(naive, made[0], String.valueOf(reason[0]));
    }
}
