package dev.stagger.benchmarks.hedge;

import dev.stagger.Backoff;
import dev.stagger.HedgePolicy;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.benchmarks.HarnessArgs;
import dev.stagger.shedding.overload.LoopbackServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Hedged requests against a long tail, in a real server (a harness, not JMH). Jetty on 127.0.0.1
 * answers a GET after {@code --base-ms} (uniform within ±20 %), except {@code --slow-share} of
 * requests (2 %), which take {@code --slow-factor} times longer (20x). An open-loop generator sends
 * {@code --rate} calls per second for {@code --seconds} through the JDK {@code HttpClient}
 * ({@code sendAsync}, HTTP/1.1), each call timed from its scheduled start; the first
 * {@code --warmup} seconds are not recorded. Scenarios, each on a fresh server and a fresh
 * {@link Retry} (so a percentile delay learns from nothing), interleaved round by round:
 * <ul>
 *   <li>no hedging (the same client without a Retry);</li>
 *   <li>a fixed delay of twice the base latency;</li>
 *   <li>a delay at the 95th percentile of recent latencies (fixed delay during a warm-up of 100);</li>
 *   <li>overload: the server limited to {@code --permits} requests at a time (a fair semaphore, so
 *       others queue) and driven at {@code --overload} times its capacity, without hedging, with a
 *       p95 hedge and no budget, and with a p95 hedge and a budget of {@code --budget-ratio}
 *       (hedges spend it; its floor is 1 per second); and without hedging a second time, a
 *       control: how far two runs that send no hedge differ in p50.</li>
 * </ul>
 * Extra requests are the requests sent beyond one per call, as a share of the recorded calls (a
 * cancelled hedge still counts: with the JDK client it may already have reached the server).
 *
 * <p><b>The same load for every scenario of a round.</b> Calls start on a fixed schedule, and the
 * server's time for a request is drawn from the round's seed ({@code --seed} plus the round), the
 * call's index and the attempt's number (sent as headers), not from a shared random stream: every
 * scenario of a round sees the same first-attempt times, so the overload scenarios differ only in
 * what hedging added. A hedge draws its own time, as a retried request would.
 *
 * <p><b>What the summary checks</b>, per round: that each hedged overload scenario's p50 is no worse
 * than the unhedged overload p50 of the same round, and that the budgeted scenario's extra
 * requests over the whole run (warm-up included, as the budget sees it) stay within what the
 * budget allows over that run: its ratio of the calls, plus its {@value #BUDGET_TOKENS} initial
 * tokens and its floor of {@value #BUDGET_FLOOR} per second over the run's seconds, which on a
 * 20 s run add several points to the ratio. Both the ratio alone and that allowance are printed.
 * Calls that fail (the {@code --timeout-ms} request timeout, 5 s, at overload) count in the extra requests they sent but
 * not in the latencies, which are those of calls answered.
 * With {@code --rounds} above 1 each figure is the median over rounds, with the spread (min–max)
 * of p99 and extra requests. All traffic stays on loopback; the run ends by itself.
 */
public final class HedgeRun {
    /** The budgeted scenario's budget: tokens it starts with (and holds at most), and its floor per second. */
    private static final int BUDGET_TOKENS = 10;
    private static final int BUDGET_FLOOR = 1;

    private HedgeRun() {
    }

    /** One configuration: the server's shape, the rate and how calls are made. */
    private record Scenario(String name, boolean overload, Function<Setup, Caller> caller) {
    }

    /** What a scenario's caller is built from. */
    private record Setup(HttpClient client, URI uri, Duration base, double budgetRatio, Duration timeout) {
    }

    /** Makes call {@code index}, counting each request it sends in {@code requests}. */
    @FunctionalInterface
    private interface Caller {
        CompletableFuture<?> call(LongAdder requests, int index);

        /** What the caller's retry saw: hedges sent and won, and its hedge delay now; empty for none. */
        default String report() {
            return "";
        }
    }

    /**
     * One run of one scenario: latencies and extra requests over the recorded calls; {@code allCalls},
     * {@code extraAll} and {@code seconds} over the whole run (warm-up and the wait for the last calls included).
     */
    private record Result(double p50, double p99, double p999, double extra, int calls, int failed, String notes,
                          int allCalls, double extraAll, double seconds) {
    }

    public static void main(String[] args) throws Exception {
        HarnessArgs a = new HarnessArgs(args);
        double rate = a.positive("--rate", 50.0);
        Duration duration = Duration.ofSeconds(a.positive("--seconds", 20));
        Duration warmup = Duration.ofSeconds(a.positive("--warmup", 5));
        Duration base = Duration.ofMillis(a.positive("--base-ms", 50));
        double slowShare = a.positive("--slow-share", 0.02);
        int slowFactor = a.positive("--slow-factor", 20);
        int permits = a.positive("--permits", 2);
        double overload = a.positive("--overload", 1.05);
        double budgetRatio = a.positive("--budget-ratio", 0.05);
        int rounds = a.positive("--rounds", 3);
        Duration timeout = Duration.ofMillis(a.positive("--timeout-ms", 5000));
        long seed = a.positive("--seed", 1);

        double meanServiceSeconds = base.toNanos() / 1e9 * ((1 - slowShare) + slowShare * slowFactor);
        double capacity = permits / meanServiceSeconds;
        List<Scenario> scenarios = List.of(
                new Scenario("no hedging", false, s -> plain(s)),
                new Scenario(String.format(Locale.ROOT, "fixed delay %d ms", base.toMillis() * 2), false,
                        s -> hedged(s, HedgePolicy.after(s.base().multipliedBy(2)), false)),
                new Scenario("p95 delay", false, s -> hedged(s, p95(s), false)),
                new Scenario(String.format(Locale.ROOT, "overload %.2fx, no hedging", overload), true, s -> plain(s)),
                new Scenario(controlName(overload), true, s -> plain(s)),
                new Scenario(String.format(Locale.ROOT, "overload %.2fx, p95, no budget", overload), true,
                        s -> hedged(s, p95(s), false)),
                new Scenario(budgetedName(overload, budgetRatio), true, s -> hedged(s, p95(s), true)));

        System.out.printf(Locale.ROOT, "hedging: %.0f calls/s for %d s (%d s warm-up), base %d ms, %.0f %% %dx slower;"
                        + " overload: %d permits (capacity %.0f/s) at %.2fx%n",
                rate, duration.toSeconds(), warmup.toSeconds(), base.toMillis(), slowShare * 100, slowFactor, permits,
                capacity, overload);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        // One unrecorded run to warm the JVM up.
        runOnce(scenarios.get(2), client, rate, Duration.ofSeconds(3), Duration.ofSeconds(1), base, slowShare,
                slowFactor, 0, budgetRatio, timeout, seed - 1);
        Map<String, List<Result>> results = new LinkedHashMap<>();
        for (int r = 0; r < rounds; r++) {
            for (Scenario s : scenarios) {
                double offered = s.overload() ? capacity * overload : rate;
                Result result = runOnce(s, client, offered, duration, warmup, base, slowShare, slowFactor,
                        s.overload() ? permits : 0, budgetRatio, timeout, seed + r);
                results.computeIfAbsent(s.name(), k -> new ArrayList<>()).add(result);
                System.out.printf(Locale.ROOT, "  round %d  %-34s p50 %7.1f  p99 %7.1f  p999 %7.1f ms  extra %5.1f %%"
                                + "  (%d calls, %d failed) %s%n", r + 1, s.name(), result.p50(), result.p99(), result.p999(),
                        result.extra() * 100, result.calls(), result.failed(), result.notes());
            }
        }
        print(results, rounds);
        check(results, rounds, overload, budgetRatio);
    }

    /** The unhedged overload scenario run a second time: how far two runs without hedging differ. */
    private static String controlName(double overload) {
        return String.format(Locale.ROOT, "overload %.2fx, no hedging again", overload);
    }

    private static String budgetedName(double overload, double budgetRatio) {
        return String.format(Locale.ROOT, "overload %.2fx, p95, budget %.0f %%", overload, budgetRatio * 100);
    }

    private static HedgePolicy p95(Setup s) {
        return HedgePolicy.builder().delay(s.base().multipliedBy(2)).percentile(95).warmup(100)
                .floor(Duration.ofMillis(1)).build();
    }

    private static Caller plain(Setup s) {
        return (requests, index) -> {
            requests.increment();
            return s.client().sendAsync(request(s, index, 1), HttpResponse.BodyHandlers.discarding());
        };
    }

    /** The request of attempt {@code attempt} of call {@code index}: the server draws its time from both. */
    private static HttpRequest request(Setup s, int index, int attempt) {
        return HttpRequest.newBuilder(s.uri()).timeout(s.timeout())
                .header("X-Call", Integer.toString(index)).header("X-Attempt", Integer.toString(attempt)).build();
    }

    private static Caller hedged(Setup s, HedgePolicy hedge, boolean budgeted) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).hedge(hedge).build();
        Retry retry = Retry.of("hedge-run", policy);
        retry = budgeted
                ? retry.withBudget(RetryBudget.builder("hedge-run-budget").ratio(s.budgetRatio()).maxTokens(BUDGET_TOKENS)
                        .minRetriesPerSecond(BUDGET_FLOOR).build())
                : retry.withoutBudget();
        LongAdder sent = new LongAdder();
        LongAdder won = new LongAdder();
        java.util.concurrent.ConcurrentLinkedQueue<Long> durations = new java.util.concurrent.ConcurrentLinkedQueue<>();
        Retry r = retry.withListener(new RetryListener() {
            @Override
            public void onHedgeSent(RetryEvent.HedgeSent event) {
                sent.increment();
            }

            @Override
            public void onHedgeWon(RetryEvent.HedgeWon event) {
                won.increment();
            }

            @Override
            public void onAttemptFinished(RetryEvent.AttemptFinished event) {
                if (!event.failed()) {
                    durations.add(event.duration().toNanos());
                }
            }
        });
        return new Caller() {
            @Override
            public CompletableFuture<?> call(LongAdder requests, int index) {
                return r.callAsync(attempt -> {
                    requests.increment();
                    return s.client().sendAsync(request(s, index, attempt.attempt()), HttpResponse.BodyHandlers.discarding());
                });
            }

            @Override
            public String report() {
                long[] d = durations.stream().mapToLong(Long::longValue).sorted().toArray();
                return String.format(Locale.ROOT, "hedges sent %d, won %d, refused %d; delay now %.1f ms;"
                                + " winners' attempt p50 %.1f p95 %.1f p99 %.1f", sent.sum(), won.sum(), r.hedgesRefused(),
                        r.hedgeDelay().orElseThrow().toNanos() / 1e6, ms(d, 0.5), ms(d, 0.95), ms(d, 0.99));
            }
        };
    }

    private static Result runOnce(Scenario scenario, HttpClient client, double rate, Duration duration, Duration warmup,
                                  Duration base, double slowShare, int slowFactor, int permits, double budgetRatio,
                                  Duration timeout, long seed)
            throws Exception {
        Semaphore capacity = permits > 0 ? new Semaphore(permits, true) : null;
        long baseNanos = base.toNanos();
        try (LoopbackServer server = LoopbackServer.start((request, response) -> {
            SplittableRandom random = new SplittableRandom(seed * 1_000_003L
                    + Long.parseLong(request.getHeader("X-Call")) * 8 + Long.parseLong(request.getHeader("X-Attempt")));
            long nanos = (long) (baseNanos * (0.8 + 0.4 * random.nextDouble()));
            if (random.nextDouble() < slowShare) {
                nanos *= slowFactor;
            }
            try {
                if (capacity != null) {
                    capacity.acquire();
                }
                try {
                    TimeUnit.NANOSECONDS.sleep(nanos);
                } finally {
                    if (capacity != null) {
                        capacity.release();
                    }
                }
            } catch (InterruptedException stopping) {
                Thread.currentThread().interrupt();
                response.setStatus(503);
                return;
            }
            response.setStatus(200);
            response.setContentLength(0);
        })) {
            Caller caller = scenario.caller().apply(new Setup(client, server.uri("/work"), base, budgetRatio, timeout));
            return drive(caller, rate, duration, warmup);
        }
    }

    /** Open loop: one call per tick, each timed from its tick; waits up to 5 s for the last calls. */
    private static Result drive(Caller caller, double rate, Duration duration, Duration warmup)
            throws InterruptedException {
        LongAdder requests = new LongAdder();
        LongAdder unrecorded = new LongAdder();
        long period = (long) (1e9 / rate);
        int total = (int) (duration.toNanos() / period);
        int skip = (int) (warmup.toNanos() / period);
        long[] latencies = new long[total];
        Arrays.fill(latencies, -1);
        AtomicInteger failed = new AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<Throwable> firstFailure = new java.util.concurrent.atomic.AtomicReference<>();
        AtomicInteger done = new AtomicInteger();
        AtomicInteger next = new AtomicInteger();
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
        long start = System.nanoTime();
        // How late Stagger's timer runs hedges on this machine: a 10 ms wait every 20 ms
        java.util.concurrent.ConcurrentLinkedQueue<Long> lateness = new java.util.concurrent.ConcurrentLinkedQueue<>();
        ticker.scheduleAtFixedRate(() -> {
            long due = System.nanoTime() + 10_000_000L;
            dev.stagger.Clock.system().schedule(() -> lateness.add(System.nanoTime() - due), 10_000_000L);
        }, 0, 20, TimeUnit.MILLISECONDS);
        ticker.scheduleAtFixedRate(() -> {
            int i = next.getAndIncrement();
            if (i >= total) {
                return;
            }
            long due = start + i * period;
            CompletableFuture<?> f;
            try {
                f = caller.call(i < skip ? unrecorded : requests, i);
            } catch (RuntimeException e) {
                failed.incrementAndGet();
                done.incrementAndGet();
                return;
            }
            f.whenComplete((v, t) -> {
                if (t != null) {
                    failed.incrementAndGet();
                    firstFailure.compareAndSet(null, t);
                } else {
                    latencies[i] = System.nanoTime() - due;
                }
                done.incrementAndGet();
            });
        }, 0, period, TimeUnit.NANOSECONDS);
        long stopBy = start + duration.toNanos() + TimeUnit.SECONDS.toNanos(5);
        while (done.get() < total && System.nanoTime() < stopBy) {
            TimeUnit.MILLISECONDS.sleep(20);
        }
        ticker.shutdownNow();
        double seconds = (System.nanoTime() - start) / 1e9;
        int calls = Math.min(next.get(), total);
        long[] recorded = Arrays.stream(Arrays.copyOfRange(latencies, skip, calls)).filter(x -> x >= 0).sorted().toArray();
        int measured = Math.max(0, calls - skip);
        double extra = measured == 0 ? 0 : (requests.sum() - measured) / (double) measured;
        Throwable first = firstFailure.get();
        long[] late = lateness.stream().mapToLong(Long::longValue).sorted().toArray();
        String notes = caller.report() + String.format(Locale.ROOT, "; timer late p50 %.1f p99 %.1f ms", ms(late, 0.5),
                ms(late, 0.99)) + (first == null ? "" : "; first failure: " + first);
        double extraAll = calls == 0 ? 0 : (requests.sum() + unrecorded.sum() - calls) / (double) calls;
        return new Result(ms(recorded, 0.50), ms(recorded, 0.99), ms(recorded, 0.999), extra, calls, failed.get(), notes,
                calls, extraAll, seconds);
    }

    private static double ms(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.max(1, Math.ceil(q * sorted.length));
        return sorted[rank - 1] / 1e6;
    }

    private static void print(Map<String, List<Result>> results, int rounds) {
        System.out.println();
        System.out.printf("| Scenario (median of %d rounds) | p50 ms | p99 ms (spread) | p999 ms | p99 / unhedged | extra requests (spread) |%n",
                rounds);
        System.out.println("|---|---|---|---|---|---|");
        List<Result> unhedged = null;
        for (Map.Entry<String, List<Result>> e : results.entrySet()) {
            List<Result> rs = e.getValue();
            if (e.getKey().endsWith("no hedging")) {
                unhedged = rs;
            }
            double[] ratios = new double[rs.size()];
            for (int i = 0; i < rs.size(); i++) {
                ratios[i] = unhedged == null ? Double.NaN : rs.get(i).p99() / unhedged.get(i).p99();
            }
            System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f (%.1f–%.1f) | %.1f | %.2f | %.1f %% (%.1f–%.1f) |%n", e.getKey(),
                    median(rs, Result::p50), median(rs, Result::p99), min(rs, Result::p99), max(rs, Result::p99),
                    median(rs, Result::p999), median(ratios), 100 * median(rs, Result::extra),
                    100 * min(rs, Result::extra), 100 * max(rs, Result::extra));
        }
    }

    /**
     * The two overload goals, round by round: a hedged overload p50 no worse than the
     * unhedged one of the same round, and the budgeted scenario's extra requests within the budget.
     */
    private static void check(Map<String, List<Result>> results, int rounds, double overload, double budgetRatio) {
        String unhedgedName = String.format(Locale.ROOT, "overload %.2fx, no hedging", overload);
        List<Result> unhedged = results.get(unhedgedName);
        System.out.println();
        for (Map.Entry<String, List<Result>> e : results.entrySet()) {
            if (!e.getKey().startsWith("overload") || e.getKey().equals(unhedgedName)
                    || e.getKey().equals(controlName(overload))) {
                continue;
            }
            int met = 0;
            StringBuilder rows = new StringBuilder();
            for (int r = 0; r < rounds; r++) {
                double hedged = e.getValue().get(r).p50();
                double plain = unhedged.get(r).p50();
                met += hedged <= plain ? 1 : 0;
                rows.append(String.format(Locale.ROOT, "%s%.0f vs %.0f", r == 0 ? "" : ", ", hedged, plain));
            }
            System.out.printf(Locale.ROOT, "check p50 hedged <= p50 unhedged, %s: %s in %d of %d rounds (ms, hedged vs unhedged: %s)%n",
                    e.getKey(), met == rounds ? "MET" : "NOT MET", met, rounds, rows);
        }
        StringBuilder control = new StringBuilder();
        for (int r = 0; r < rounds; r++) {
            double again = results.get(controlName(overload)).get(r).p50();
            double plain = unhedged.get(r).p50();
            control.append(String.format(Locale.ROOT, "%s%.0f vs %.0f (%+.0f %%)", r == 0 ? "" : ", ", again, plain,
                    100 * (again / plain - 1)));
        }
        System.out.printf(Locale.ROOT, "control, the unhedged overload run twice (no hedge in either), p50 ms: %s%n", control);
        List<Result> budgeted = results.get(budgetedName(overload, budgetRatio));
        int within = 0;
        for (int r = 0; r < rounds; r++) {
            Result b = budgeted.get(r);
            // what the budget can grant over the run: ratio x calls, the initial tokens, the floor's burst and rate
            double allowed = (budgetRatio * b.allCalls() + BUDGET_TOKENS + BUDGET_FLOOR + BUDGET_FLOOR * b.seconds())
                    / b.allCalls();
            within += b.extraAll() <= allowed ? 1 : 0;
            System.out.printf(Locale.ROOT, "  round %d budget: extra over the run %.1f %% of %d calls; the ratio alone %.1f %%,"
                            + " the budget's share over %.0f s %.1f %% (ratio + %d initial tokens + floor %d/s): %s%n",
                    r + 1, 100 * b.extraAll(), b.allCalls(), 100 * budgetRatio, b.seconds(), 100 * allowed, BUDGET_TOKENS,
                    BUDGET_FLOOR, b.extraAll() <= allowed ? "within" : "OVER");
        }
        System.out.printf(Locale.ROOT, "check extra <= the budget's share: %s in %d of %d rounds%n",
                within == rounds ? "MET" : "NOT MET", within, rounds);
    }

    private static double median(List<Result> rs, java.util.function.ToDoubleFunction<Result> f) {
        return median(rs.stream().mapToDouble(f).toArray());
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static double min(List<Result> rs, java.util.function.ToDoubleFunction<Result> f) {
        return rs.stream().mapToDouble(f).min().orElse(Double.NaN);
    }

    private static double max(List<Result> rs, java.util.function.ToDoubleFunction<Result> f) {
        return rs.stream().mapToDouble(f).max().orElse(Double.NaN);
    }
}
