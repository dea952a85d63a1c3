package dev.stagger.sim.internal;

import dev.stagger.Backoff;
import dev.stagger.HedgePolicy;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.sim.TailConfig;
import dev.stagger.sim.TailResult;
import dev.stagger.sim.TailSetup;
import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * One run of the {@code tail} scenario for one set-up at one load: calls arrive at random and go
 * through one real {@link Retry} (hedged by the real {@link HedgePolicy} on the run's virtual
 * clock) to a server of a few workers whose service time has a long tail. A cancelled attempt
 * (a hedge's loser) is dropped by the server if it is still queued when the cancellation arrives;
 * one already being served runs to its end. See the module README for the model.
 */
public final class TailRun {
    /** A run that would take more events than this is a runaway, not a simulation. */
    private static final int MAX_EVENTS = 100_000_000;

    private final TailSetup setup;
    private final boolean overloaded;
    private final EventLoop clock = new EventLoop();
    private final NetworkDelay network;
    private final SplittableRandom arrivals;
    private final SplittableRandom service;
    private final Retry retry;
    private final int workers;
    private final long serviceNanos;
    private final double tailShare;
    private final double tailFactor;
    private final double rate;
    private final long endNanos;

    private final ArrayDeque<Request> queue = new ArrayDeque<>();
    private int busy;
    private final LongList latencies = new LongList();
    private long calls;
    private long attempts;
    private long hedges;
    private long hedgesWon;

    /** One attempt at the server; {@code cancelAt} is when its cancellation reaches the server, if ever. */
    private static final class Request {
        final CompletableFuture<Void> reply;
        long cancelAt = Long.MAX_VALUE;

        Request(CompletableFuture<Void> reply) {
            this.reply = reply;
        }
    }

    public TailRun(TailConfig config, TailSetup setup, boolean overloaded, long seed) {
        this.setup = setup;
        this.overloaded = overloaded;
        SplittableRandom random = new SplittableRandom(seed);
        this.network = new NetworkDelay(random.split(), config.networkMean().toNanos(), config.networkSd().toNanos());
        this.arrivals = random.split();
        this.service = random.split();
        SplittableRandom jitter = random.split();
        this.workers = config.workers();
        this.serviceNanos = config.serviceTime().toNanos();
        this.tailShare = config.tailShare();
        this.tailFactor = config.tailFactor();
        this.rate = (overloaded ? config.overload() : config.load()) * config.capacity();
        this.endNanos = config.duration().toNanos();

        RetryPolicy.Builder policy = RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none());
        if (setup.delay() == TailSetup.Delay.FIXED) {
            policy.hedge(HedgePolicy.after(config.fixedDelay()));
        } else if (setup.delay() == TailSetup.Delay.PERCENTILE) {
            policy.hedge(HedgePolicy.builder().delay(config.fixedDelay()).percentile(config.percentile()).build());
        }
        Retry r = Retry.of("tail", policy.build()).withClock(clock).withRandom(jitter::nextDouble)
                .withListener(new RetryListener() {
                    @Override
                    public void onHedgeSent(RetryEvent.HedgeSent event) {
                        hedges++;
                    }

                    @Override
                    public void onHedgeWon(RetryEvent.HedgeWon event) {
                        hedgesWon++;
                    }
                });
        // a set-up without the budget runs with none, not with Retry's default one
        this.retry = setup.budget() ? r.withBudget(RetryBudget.builder("tail").clock(clock).build()) : r.withoutBudget();
    }

    public TailResult run() {
        clock.post(this::startCall, nextArrival());
        clock.runUntilIdle(MAX_EVENTS);
        return new TailResult(setup, overloaded, rate, calls, attempts, hedges, hedgesWon,
                latencies.percentile(50) / 1e6, latencies.percentile(99) / 1e6, latencies.percentile(99.9) / 1e6);
    }

    /** Exponential gaps: a Poisson process at the offered rate. */
    private long nextArrival() {
        return (long) (-Math.log(1.0 - arrivals.nextDouble()) / rate * 1e9);
    }

    // ---- the client ----

    private void startCall() {
        long start = clock.nanoTime();
        calls++;
        long next = nextArrival();
        if (start + next < endNanos) {
            clock.post(this::startCall, next);
        }
        retry.callAsync(this::send).whenComplete((ok, failure) -> latencies.add(clock.nanoTime() - start));
    }

    /** One attempt: travels to the server; cancelling its future sends the cancellation after it. */
    private CompletableFuture<Void> send() {
        CompletableFuture<Void> reply = new CompletableFuture<>();
        Request request = new Request(reply);
        reply.whenComplete((ok, failure) -> {
            if (reply.isCancelled()) {
                request.cancelAt = clock.nanoTime() + network.nextNanos();
            }
        });
        clock.post(() -> arrive(request), network.nextNanos());
        return reply;
    }

    // ---- the server ----

    private void arrive(Request request) {
        attempts++;
        if (busy < workers) {
            serve(request);
        } else {
            queue.add(request);
        }
    }

    private void serve(Request request) {
        busy++;
        double factor = 0.5 + service.nextDouble();
        if (tailShare > 0 && service.nextDouble() < tailShare) {
            factor *= tailFactor;
        }
        clock.post(() -> finish(request), (long) (serviceNanos * factor));
    }

    private void finish(Request request) {
        busy--;
        clock.post(() -> request.reply.complete(null), network.nextNanos());
        long now = clock.nanoTime();
        Request next;
        while ((next = queue.poll()) != null) {
            if (next.cancelAt > now) {
                serve(next);
                return;
            }
            // cancelled while queued: the server drops it unserved
        }
    }
}
