package dev.stagger.sim.internal;

import dev.stagger.Decision;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.sim.LayersConfig;
import dev.stagger.sim.LayersResult;
import dev.stagger.sim.LayersSetup;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * One run of the {@code layers} scenario for one set-up: users send requests down a chain of
 * tiers, each tier calls the next through its own real {@link Retry} on the run's virtual clock,
 * and the last one calls a bottom that fails for a while (or at a rate). Counts, per request,
 * the attempts reaching each tier and those reaching the bottom after the user stopped waiting.
 * See the module README for the model.
 */
public final class LayersRun {
    private static final long SECOND = 1_000_000_000L;
    /** A run that would take more events than this is a runaway, not a simulation. */
    private static final int MAX_EVENTS = 200_000_000;

    private final LayersConfig config;
    private final LayersSetup setup;
    private final EventLoop clock = new EventLoop();
    private final NetworkDelay network;
    private final SplittableRandom jitter;
    private final SplittableRandom failures;
    private final int tiers;
    private final int requests;
    private final long intervalNanos;
    private final long userTimeoutNanos;
    private final long reserveNanos;
    private final long serviceNanos;
    private final long outageFrom;
    private final long outageTo;
    /** Each tier's policy without a deadline, and, unless the deadline is propagated, its one Retry. */
    private final RetryPolicy[] policies;
    private final Retry[] retries;
    private final RetryBudget[] budgets;
    private final RetryListener[] listeners;

    // what is measured
    private final long[] startedAt;
    private final int[][] arrivals;
    private final int[] late;
    private final long[] answeredAt;
    private final boolean[] answeredOk;
    private int[] bottomLoad = new int[64];
    private int lastSecond = -1;
    private long bottomAttempts;
    private long lateAttempts;
    private final EnumMap<EndReason, Long> edgeReasons = new EnumMap<>(EndReason.class);
    private final EnumMap<EndReason, Long> innerReasons = new EnumMap<>(EndReason.class);
    private int started;

    public LayersRun(LayersConfig config, LayersSetup setup, long seed) {
        this.config = config;
        this.setup = setup;
        SplittableRandom random = new SplittableRandom(seed);
        this.network = new NetworkDelay(random.split(), config.networkMean().toNanos(), config.networkSd().toNanos());
        this.jitter = random.split();
        this.failures = random.split();
        this.tiers = config.tiers();
        this.intervalNanos = Math.max(1, Math.round(1e9 / config.rate()));
        this.requests = (int) Math.max(1, Math.min(Integer.MAX_VALUE - 8, config.duration().toNanos() / intervalNanos));
        this.userTimeoutNanos = config.userTimeout().toNanos();
        this.reserveNanos = 2 * config.networkMean().toNanos();
        this.serviceNanos = config.serviceTime().toNanos();
        this.outageFrom = config.outageStart().toNanos();
        this.outageTo = outageFrom + config.outageLength().toNanos();
        this.startedAt = new long[requests];
        this.arrivals = new int[tiers + 1][requests];
        this.late = new int[requests];
        this.answeredAt = new long[requests];
        Arrays.fill(answeredAt, -1);
        this.answeredOk = new boolean[requests];

        this.policies = new RetryPolicy[tiers];
        this.retries = new Retry[tiers];
        this.budgets = new RetryBudget[tiers];
        this.listeners = new RetryListener[tiers];
        for (int t = 0; t < tiers; t++) {
            policies[t] = policy(config.attempts(), setup.oneLayer());
            budgets[t] = setup.budget() ? RetryBudget.builder("tier-" + (t + 1)).clock(clock).build() : null;
            listeners[t] = reasonsOf(t);
            retries[t] = setup.deadline() ? null : retry(t, policies[t]);
        }
    }

    /**
     * A tier's policy: {@code attempts} attempts, Stagger's default backoff, every failure
     * retried — except, under the one-layer rule, a failure the tier below already decided.
     */
    static RetryPolicy policy(int attempts, boolean oneLayer) {
        return RetryPolicy.builder().maxAttempts(attempts).classifier((result, failure, context) -> {
            if (failure == null) {
                return Decision.accept();
            }
            return oneLayer && failure instanceof DoNotRetry ? Decision.stop() : Decision.retry();
        }).build();
    }

    private Retry retry(int tier, RetryPolicy policy) {
        Retry r = Retry.of("tier-" + (tier + 1), policy).withClock(clock).withRandom(jitter::nextDouble)
                .withListener(listeners[tier]);
        // a set-up without the budget guard runs with none, not with Retry's default one
        return budgets[tier] == null ? r.withoutBudget() : r.withBudget(budgets[tier]);
    }

    private RetryListener reasonsOf(int tier) {
        return new RetryListener() {
            @Override
            public void onCallFinished(RetryEvent.CallFinished event) {
                if (tier == 0) {
                    edgeReasons.merge(event.reason(), 1L, Long::sum);
                }
                if (tier == tiers - 1) {
                    innerReasons.merge(event.reason(), 1L, Long::sum);
                }
            }
        };
    }

    public LayersResult run() {
        clock.post(this::startRequest, 0);
        clock.runUntilIdle(MAX_EVENTS); // past the traffic: unguarded tiers keep working for nobody
        return result();
    }

    // ---- users ----

    private void startRequest() {
        int request = started++;
        long now = clock.nanoTime();
        startedAt[request] = now;
        if (started < requests) {
            clock.post(this::startRequest, intervalNanos);
        }
        long deadlineAt = now + userTimeoutNanos;
        CompletableFuture<Void> reply = new CompletableFuture<>();
        clock.post(() -> arriveAtTier(0, request, deadlineAt, reply), network.nextNanos());
        reply.whenComplete((ok, failure) -> {
            answeredAt[request] = clock.nanoTime();
            answeredOk[request] = failure == null;
        });
    }

    // ---- the tiers ----

    /** Tier {@code tier} (0 is the edge) receives a request and calls its downstream through its Retry. */
    private void arriveAtTier(int tier, int request, long deadlineAt, CompletableFuture<Void> reply) {
        arrivals[tier][request]++;
        Retry retry = retries[tier];
        if (setup.deadline()) {
            // keep one round trip in hand for the answer; with less, calling down is work for nobody
            long remaining = deadlineAt - reserveNanos - clock.nanoTime();
            if (remaining <= 0) {
                answer(reply, DoNotRetry.NO_TIME);
                return;
            }
            retry = retry(tier, policies[tier].toBuilder().deadline(Duration.ofNanos(remaining)).build());
        }
        retry.callAsync(() -> send(tier + 1, request, deadlineAt)).whenComplete((ok, failure) ->
                answer(reply, failure == null ? null : setup.oneLayer() ? DoNotRetry.DECIDED : Rejection.UNAVAILABLE));
    }

    /** One attempt from a tier to the next one (or to the bottom). */
    private CompletableFuture<Void> send(int next, int request, long deadlineAt) {
        CompletableFuture<Void> reply = new CompletableFuture<>();
        clock.post(() -> {
            if (next == tiers) {
                arriveAtBottom(request, reply);
            } else {
                arriveAtTier(next, request, deadlineAt, reply);
            }
        }, network.nextNanos());
        return reply;
    }

    /** The answer travels back over the network: a success when {@code failure} is null. */
    private void answer(CompletableFuture<Void> reply, @Nullable RuntimeException failure) {
        clock.post(() -> {
            if (failure == null) {
                reply.complete(null);
            } else if (failure instanceof DoNotRetry d) {
                d.fail(reply);
            } else {
                ((Rejection) failure).fail(reply);
            }
        }, network.nextNanos());
    }

    // ---- the bottom ----

    private void arriveAtBottom(int request, CompletableFuture<Void> reply) {
        long now = clock.nanoTime();
        arrivals[tiers][request]++;
        bottomAttempts++;
        if (now >= startedAt[request] + userTimeoutNanos) {
            late[request]++;
            lateAttempts++;
        }
        int second = (int) (now / SECOND);
        if (second >= bottomLoad.length) {
            bottomLoad = Arrays.copyOf(bottomLoad, Math.max(second + 1, 2 * bottomLoad.length));
        }
        bottomLoad[second]++;
        lastSecond = Math.max(lastSecond, second);
        boolean down = now >= outageFrom && now < outageTo;
        boolean unlucky = config.failureRate() > 0 && failures.nextDouble() < config.failureRate();
        long delay = serviceNanos + network.nextNanos();
        if (down || unlucky) {
            clock.post(() -> Rejection.UNAVAILABLE.fail(reply), delay);
        } else {
            clock.post(() -> reply.complete(null), delay);
        }
    }

    // ---- the result ----

    private boolean metTheFailure(int request) {
        return outageTo <= outageFrom || (startedAt[request] >= outageFrom && startedAt[request] < outageTo);
    }

    private LayersResult result() {
        long affected = 0;
        double[] arrivalsPerRequest = new double[tiers + 1];
        long lateSum = 0;
        int maxBottom = 0;
        long succeeded = 0;
        long failed = 0;
        long timedOut = 0;
        LongList latencies = new LongList();
        for (int r = 0; r < started; r++) {
            maxBottom = Math.max(maxBottom, arrivals[tiers][r]);
            if (metTheFailure(r)) {
                affected++;
                for (int t = 0; t <= tiers; t++) {
                    arrivalsPerRequest[t] += arrivals[t][r];
                }
                lateSum += late[r];
            }
            long waited = answeredAt[r] - startedAt[r];
            if (answeredAt[r] >= 0 && waited <= userTimeoutNanos) {
                latencies.add(waited);
                if (answeredOk[r]) {
                    succeeded++;
                } else {
                    failed++;
                }
            } else {
                latencies.add(userTimeoutNanos); // the user gave up
                timedOut++;
            }
        }
        for (int t = 0; t <= tiers; t++) {
            arrivalsPerRequest[t] = affected == 0 ? 0 : arrivalsPerRequest[t] / affected;
        }
        return new LayersResult(setup, config, started, affected, succeeded, failed, timedOut, arrivalsPerRequest,
                maxBottom, affected == 0 ? 0 : lateSum / (double) affected, bottomAttempts, lateAttempts,
                latencies.percentile(50) / 1e6, latencies.percentile(90) / 1e6, latencies.percentile(99) / 1e6,
                Arrays.copyOf(bottomLoad, lastSecond + 1), edgeReasons, innerReasons);
    }
}
