package dev.stagger.sim.internal;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.Backoff;
import dev.stagger.Decision;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.sim.MetastableConfig;
import dev.stagger.sim.MetastableResult;
import dev.stagger.sim.MetastableSetup;
import java.time.Duration;
import java.util.EnumMap;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * One run of the {@code metastable} scenario for one client set-up: open-loop clients, a server of
 * a few workers with a bounded FIFO queue that keeps serving requests whose clients have given up,
 * a trigger that takes half the workers away for a while, and optionally a server that sheds what
 * it cannot serve soon with 503 and a Retry-After. See the module README for the model.
 */
public final class MetastableRun {
    private static final long SECOND = 1_000_000_000L;
    /** The shedding filter's Retry-After jitter: {@code n .. n + max(1, ceil(n × 0.5))}. */
    private static final double RETRY_AFTER_JITTER = 0.5;

    private final MetastableConfig config;
    private final MetastableSetup setup;
    private final EventLoop clock = new EventLoop();
    private final NetworkDelay network;
    private final SplittableRandom phases;
    private final SplittableRandom shedJitter;
    private final Retry retry;
    private final long intervalNanos;
    private final long durationNanos;
    private final long triggerFrom;
    private final long triggerTo;
    private final long serviceNanos;

    // the server
    private int busy;
    private final CompletableFuture<?>[] queue;
    private int queueHead;
    private int queued;
    // the shedding filter's counts over the trailing second: [second % 2]
    private final long[] shedCounts = new long[2];
    private final long[] admittedCounts = new long[2];
    private final long[] countSecond = {-1, -1};

    // what is measured
    private final int[] goodput;
    private final int[] load;
    private final LongList latencies = new LongList();
    private final EnumMap<EndReason, Long> reasons = new EnumMap<>(EndReason.class);
    private long calls;
    private long attempts;
    private long shed;
    private long dropped;

    public MetastableRun(MetastableConfig config, MetastableSetup setup, long seed) {
        this.config = config;
        this.setup = setup;
        SplittableRandom random = new SplittableRandom(seed);
        this.network = new NetworkDelay(random.split(), config.networkMean().toNanos(), config.networkSd().toNanos());
        SplittableRandom jitter = random.split();
        this.phases = random.split();
        this.shedJitter = random.split();
        SplittableRandom throttleDraws = random.split();
        this.intervalNanos = Math.max(1, Math.round(config.clients() * 1e9 / config.offeredRate()));
        this.durationNanos = config.duration().toNanos();
        this.triggerFrom = config.triggerStart().toNanos();
        this.triggerTo = triggerFrom + config.triggerLength().toNanos();
        this.serviceNanos = config.serviceTime().toNanos();
        this.queue = new CompletableFuture<?>[Math.max(1, config.queueLimit())];
        int seconds = (int) ((durationNanos + SECOND - 1) / SECOND);
        this.goodput = new int[seconds];
        this.load = new int[seconds];

        Retry r = Retry.of("sim", policy(setup.retries(), config.attemptTimeout())).withClock(clock)
                .withRandom(jitter::nextDouble).withListener(new RetryListener() {
                    @Override
                    public void onCallFinished(RetryEvent.CallFinished event) {
                        reasons.merge(event.reason(), 1L, Long::sum);
                    }
                });
        if (setup.budget()) {
            r = r.withBudget(RetryBudget.builder("sim").clock(clock).build());
        } else if (setup.retries() != MetastableSetup.Retries.DEFAULTS) {
            r = r.withoutBudget(); // naive and plain exponential retries are not Stagger's: no budget
        }
        // else Stagger's defaults, default budget included: one per run, shared by every client (a fleet budget)
        if (setup.throttle()) {
            r = r.withThrottle(AdaptiveThrottle.builder("sim").clock(clock).random(throttleDraws::nextDouble).build());
        }
        this.retry = r;
    }

    /** The client's retry policy in each set-up; every one times an attempt out after {@code timeout}. */
    static RetryPolicy policy(MetastableSetup.Retries retries, Duration timeout) {
        RetryPolicy.Builder policy = switch (retries) {
            case NAIVE -> RetryPolicy.builder().maxAttempts(Integer.MAX_VALUE).backoff(Backoff.none());
            case EXPONENTIAL -> RetryPolicy.builder()
                    .backoff(Backoff.exponential(Duration.ofMillis(200)).maxDelay(Duration.ofSeconds(5)));
            case DEFAULTS -> RetryPolicy.builder();
        };
        // Retry-After is honoured as a minimum, as Stagger's HTTP client does; everything else is retried
        return policy.attemptTimeout(timeout).classifier((result, failure, context) -> {
            if (failure == null) {
                return Decision.accept();
            }
            if (failure instanceof Rejection rejection && rejection.retryAfterSeconds() > 0) {
                return Decision.retryAfter(Duration.ofSeconds(rejection.retryAfterSeconds()));
            }
            return Decision.retry();
        }).build();
    }

    public MetastableResult run() {
        for (int i = 0; i < config.clients(); i++) {
            clock.post(this::startCall, (long) (phases.nextDouble() * intervalNanos));
        }
        clock.post(this::startWaiting, triggerTo); // the workers that come back take queued work at once
        try {
            clock.sleep(durationNanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        return new MetastableResult(setup, config, goodput, load, calls, attempts, shed, dropped,
                latencies.size() == 0 ? 0 : latencies.percentile(50) / 1e6,
                latencies.size() == 0 ? 0 : latencies.percentile(99) / 1e6, reasons);
    }

    // ---- clients ----

    private void startCall() {
        long startedAt = clock.nanoTime();
        if (startedAt + intervalNanos < durationNanos) {
            clock.post(this::startCall, intervalNanos);
        }
        calls++;
        retry.callAsync(this::attempt).whenComplete((ok, failure) -> {
            if (failure == null) {
                long now = clock.nanoTime();
                latencies.add(now - startedAt);
                int second = (int) (now / SECOND);
                if (second < goodput.length) {
                    goodput[second]++;
                }
            }
        });
    }

    private CompletableFuture<Void> attempt() {
        CompletableFuture<Void> reply = new CompletableFuture<>();
        clock.post(() -> arrive(reply), network.nextNanos());
        return reply;
    }

    // ---- the server ----

    private int workersNow(long now) {
        return now >= triggerFrom && now < triggerTo ? config.workersDuringTrigger() : config.workers();
    }

    /** The shedding filter's limit once settled, for the workers serving now: {@code 1.25 N + sqrt(1.25 N)}. */
    private static int sheddingLimit(int workers) {
        double n = 1.25 * workers;
        return (int) Math.floor(n + Math.sqrt(n));
    }

    private void arrive(CompletableFuture<Void> reply) {
        long now = clock.nanoTime();
        int second = (int) (now / SECOND);
        if (second < load.length) {
            load[second]++;
        }
        attempts++;
        int workers = workersNow(now);
        if (setup.shedding() && busy + queued >= sheddingLimit(workers)) {
            shed++;
            count(shedCounts, now);
            Rejection answer = Rejection.shed(retryAfter(now));
            clock.post(() -> answer.fail(reply), network.nextNanos());
            return;
        }
        if (busy < workers) {
            count(admittedCounts, now);
            serve(reply);
            return;
        }
        if (queued >= config.queueLimit()) {
            dropped++; // a full backlog: never answered; the client finds out by its timeout
            return;
        }
        count(admittedCounts, now);
        queue[(queueHead + queued) % queue.length] = reply;
        queued++;
    }

    /** A worker serves the request; the server does not know whether its client still waits. */
    private void serve(CompletableFuture<?> reply) {
        busy++;
        clock.post(() -> {
            busy--;
            CompletableFuture<?> done = reply;
            clock.post(() -> done.complete(null), network.nextNanos());
            startWaiting();
        }, serviceNanos);
    }

    private void startWaiting() {
        int workers = workersNow(clock.nanoTime());
        while (queued > 0 && busy < workers) {
            CompletableFuture<?> next = queue[queueHead];
            queue[queueHead] = null;
            queueHead = (queueHead + 1) % queue.length;
            queued--;
            serve(next);
        }
    }

    /**
     * The shedding filter's Retry-After: {@code ceil((inFlight + shed) / admitted)} over the
     * trailing second, clamped to [1, 30] s, then a whole number drawn from {@code n .. n + spread}.
     */
    private int retryAfter(long now) {
        double shedLastSecond = trailing(shedCounts, now);
        double admittedLastSecond = trailing(admittedCounts, now);
        int n = admittedLastSecond <= 0 ? 1
                : (int) Math.min(Rejection.MAX_RETRY_AFTER, Math.max(1, Math.ceil((busy + queued + shedLastSecond) / admittedLastSecond)));
        int spread = Math.max(1, (int) Math.ceil(n * RETRY_AFTER_JITTER));
        int low = Math.min(n, Rejection.MAX_RETRY_AFTER - spread);
        return low + shedJitter.nextInt(spread + 1);
    }

    private void count(long[] counts, long now) {
        long second = now / SECOND;
        int slot = (int) (second & 1);
        if (countSecond[slot] != second) {
            shedCounts[slot] = 0;
            admittedCounts[slot] = 0;
            countSecond[slot] = second;
        }
        counts[slot]++;
    }

    /** Two one-second buckets weighted as a sliding window over the last second. */
    private double trailing(long[] counts, long now) {
        long second = now / SECOND;
        double intoSecond = (now % SECOND) / (double) SECOND;
        int slot = (int) (second & 1);
        double current = countSecond[slot] == second ? counts[slot] : 0;
        double previous = countSecond[slot ^ 1] == second - 1 ? counts[slot ^ 1] : 0;
        return current + previous * (1 - intoSecond);
    }
}
