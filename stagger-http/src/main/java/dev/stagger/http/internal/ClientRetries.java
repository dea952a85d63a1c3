package dev.stagger.http.internal;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.CircuitBreaker;
import dev.stagger.Clock;
import dev.stagger.Fallback;
import dev.stagger.HedgePolicy;
import dev.stagger.RandomSource;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.http.HttpTransport;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Retry} each call of one HTTP client runs under: the client's policy with the call's
 * classifier, its breaker, budget, throttle, random source and listeners, and its hedging — one
 * latency record shared by every hedged call of the client, and the release of the responses of
 * losing attempts (the JDK's bodies here, another transport's by the transport that owns them).
 */
public final class ClientRetries {
    private final String service;
    private final RetryPolicy policy;
    private final Clock clock;
    private final RandomSource random;
    private final @Nullable CircuitBreaker breaker;
    private final @Nullable RetryBudget budget;
    private final @Nullable AdaptiveThrottle throttle;
    private final List<RetryListener> listeners;
    /** The policy's hedging, releasing the bodies of losing responses; null when the policy does not hedge. */
    private final @Nullable HedgePolicy hedge;
    /** Holds the hedge delay's recent latencies for every hedged call of this client; null without hedging. */
    private final @Nullable Retry hedged;
    /** The other transports hedged calls went through: a loser answering after its call ended is released by its own. */
    private final Set<HttpTransport<?>> transports = ConcurrentHashMap.newKeySet();

    public ClientRetries(String service, RetryPolicy policy, Clock clock, RandomSource random,
                         @Nullable CircuitBreaker breaker, @Nullable RetryBudget budget,
                         @Nullable AdaptiveThrottle throttle, List<RetryListener> listeners) {
        this.service = service;
        this.policy = policy;
        this.clock = clock;
        this.random = random;
        this.breaker = breaker;
        this.budget = budget;
        this.throttle = throttle;
        this.listeners = List.copyOf(listeners);
        this.hedge = policy.hedge().map(h -> h.toBuilder().onDiscard(response -> {
            release(response); // a loser's body: its connection back to the pool
            h.onDiscard().ifPresent(own -> own.accept(response));
        }).build()).orElse(null);
        this.hedged = hedge == null ? null : Retry.of(service, policy.toBuilder().hedge(hedge).build()).withClock(clock);
    }

    /** Whether the client's policy hedges. */
    public boolean hedges() {
        return hedge != null;
    }

    /**
     * Whether a call through {@code transport} may hedge: the transport runs attempts at once;
     * it then releases its late losers.
     */
    public boolean hedgesThrough(HttpTransport<?> transport) {
        if (hedge == null || !transport.concurrentAttempts()) {
            return false;
        }
        transports.add(transport); // a handful per client (one per HTTP stack), added once each
        return true;
    }

    /** The retry for {@code call}, hedged or not, with the stale-if-error {@code fallback} if any. */
    public Retry forCall(HttpCall call, @Nullable Fallback<?> fallback, boolean hedgedCall) {
        Retry retry = hedgedCall && hedged != null && hedge != null
                ? hedged.withPolicy(policy.toBuilder().hedge(hedge).classifier(call).build())
                : Retry.of(service, policy.toBuilder().withoutHedge().classifier(call).build()).withClock(clock);
        retry = retry.withRandom(random).withListener(call);
        for (RetryListener l : listeners) {
            retry = retry.withListener(l);
        }
        if (breaker != null) {
            retry = retry.withCircuitBreaker(breaker);
        }
        retry = budget != null ? retry.withBudget(budget) : retry.withoutBudget();
        if (fallback != null) {
            retry = retry.withFallback(fallback);
        }
        if (throttle != null) {
            retry = retry.withThrottle(throttle.withAcceptedWhen((result, failure, decision) -> call.acceptedByServer(result, failure)));
        }
        return retry;
    }

    /** Releases a response nobody will receive: the JDK's here, another transport's by the transport owning it. */
    @SuppressWarnings("unchecked")
    private void release(Object response) {
        if (response instanceof HttpResponse<?>) {
            ResponseBodies.discard(response, clock);
            return;
        }
        for (HttpTransport<?> t : transports) {
            if (t.owns(response)) {
                ((HttpTransport<Object>) t).discard(response);
                return;
            }
        }
    }
}
