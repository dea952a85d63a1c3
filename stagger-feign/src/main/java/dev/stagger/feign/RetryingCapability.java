package dev.stagger.feign;

import dev.stagger.feign.internal.RetryingFeignClient;
import dev.stagger.http.RetryingHttpClient;
import feign.Capability;
import feign.Client;
import feign.Retryer;
import java.util.Objects;

/**
 * Makes a Feign client retry by {@link RetryingHttpClient}'s rules: its {@link Client} is
 * decorated so that each request's attempts go through {@link RetryingHttpClient#execute} (the
 * status table, {@code Retry-After}, one {@code Idempotency-Key} on every attempt of a POST or
 * PATCH, the keys-honoured rule, the breaker, the budget, the throttle, the attempt and deadline
 * headers, the events), and its {@link Retryer} is replaced by {@link Retryer#NEVER_RETRY}.
 *
 * <pre>{@code
 * RetryingHttpClient rules = RetryingHttpClient.builder().service("orders").build();
 * Orders orders = Feign.builder()
 *         .addCapability(RetryingCapability.of(rules))
 *         .target(Orders.class, "http://orders.internal");
 * }</pre>
 *
 * <h2>Why Feign's own retryer is switched off</h2>
 * Feign's {@code Retryer.Default} retries every {@code RetryableException} (any I/O failure,
 * POSTs included, and a 503 with {@code Retry-After} through the default error decoder) five times,
 * 100 ms x1.5 up to 1 s, with no jitter, budget or deadline. Left on above Stagger's client it would
 * retry again what the rules already retried to the end or judged unsafe to repeat: attempts
 * multiply. With this capability each failure is retried by one layer, the innermost.
 *
 * <p>The outcome is the last attempt's response, decoded by Feign as usual (a final 503 becomes
 * Feign's exception for it); a retried response is closed before the wait. Immutable and
 * thread-safe.
 */
public final class RetryingCapability implements Capability {
    private final RetryingHttpClient rules;

    private RetryingCapability(RetryingHttpClient rules) {
        this.rules = rules;
    }

    /**
     * A capability applying {@code rules}: a client built with {@link RetryingHttpClient#builder()}
     * (no {@code java.net.http} client), holding the policy, breaker, budget, status table and key mode.
     */
    public static RetryingCapability of(RetryingHttpClient rules) {
        return new RetryingCapability(Objects.requireNonNull(rules, "rules"));
    }

    /** The rules this capability applies. */
    public RetryingHttpClient rules() {
        return rules;
    }

    /** {@code client}, its requests' attempts sent through the rules. */
    @Override
    public Client enrich(Client client) {
        return client instanceof RetryingFeignClient ? client : new RetryingFeignClient(client, rules);
    }

    /** {@link Retryer#NEVER_RETRY}, whatever was configured: one retrying layer (see the class comment). */
    @Override
    public Retryer enrich(Retryer retryer) {
        return Retryer.NEVER_RETRY;
    }

    @Override
    public String toString() {
        return "RetryingCapability{" + rules.service() + "}";
    }
}
