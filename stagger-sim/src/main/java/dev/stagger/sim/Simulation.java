package dev.stagger.sim;

import dev.stagger.EndReason;
import dev.stagger.sim.internal.ContentionRun;
import dev.stagger.sim.internal.Guards;
import dev.stagger.sim.internal.LayersRun;
import dev.stagger.sim.internal.LongList;
import dev.stagger.sim.internal.MetastableRun;
import dev.stagger.sim.internal.OutageRun;
import dev.stagger.sim.internal.ParallelRuns;
import dev.stagger.sim.internal.RunStats;
import dev.stagger.sim.internal.TailRun;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.LongFunction;

/**
 * A deterministic discrete-event simulator of many clients retrying against one server, driving
 * Stagger's real retry engine: each client's call is a {@link dev.stagger.Retry#callAsync} on a
 * virtual {@link dev.stagger.Clock} (the run's event loop, which orders events exactly as
 * {@link dev.stagger.testing.VirtualClock} does), so every wait comes from the real {@link dev.stagger.Backoff}
 * and {@link dev.stagger.Jitter}, and every refusal from the real {@link dev.stagger.RetryBudget} and
 * {@link dev.stagger.CircuitBreaker}. Messages, server work and waits are events on the run's
 * virtual clock; a run is one event loop on one thread, so equal configurations (and seeds) give
 * equal results.
 *
 * <p>All clients of a run share one {@code Retry}, as the callers in one service share one per
 * downstream; with the switches on, they also share one budget (the defaults: ratio 0.1, 100
 * tokens, 10 retries/s floor) and one breaker (opens at 50 % failures over 2 s once 20 calls were
 * seen, stays open 500 ms, one probe). Run {@code r} of every strategy uses the same seed, so
 * strategies are compared on the same network delays.
 *
 * <p>Runs share nothing, so a simulation spreads them over the machine's cores (one thread per
 * core, at most) and combines their results in run order on the calling thread: the results are
 * the same, to the last bit, as on one thread. Separate simulations may run concurrently.
 */
public final class Simulation {

    /**
     * Told after each finished run, in run order, e.g. to draw a progress bar. Called on the
     * thread that called the simulation.
     */
    @FunctionalInterface
    public interface Progress {
        /** @param done runs finished so far, over all strategies; {@code total} when all are */
        void onRun(int done, int total);
    }

    private static final Progress SILENT = (done, total) -> { };

    private Simulation() {
    }

    /** Runs the {@code contention} scenario for each strategy in the configuration. */
    public static List<SimulationResult> contention(ContentionConfig config) {
        return contention(config, SILENT);
    }

    /** As {@link #contention(ContentionConfig)}, reporting each finished run to {@code progress}. */
    public static List<SimulationResult> contention(ContentionConfig config, Progress progress) {
        return simulate(config.strategies(), config.runs(), config.seed(), progress,
                (strategy, seed) -> new ContentionRun(config, strategy, seed).run(),
                (strategy, a) -> a.result("contention", strategy, config.budget(), config.circuitBreaker(), config.clients(),
                        config.runs(), 0, 0, 0, 0));
    }

    /** Runs the {@code outage} scenario for each strategy in the configuration. */
    public static List<SimulationResult> outage(OutageConfig config) {
        return outage(config, SILENT);
    }

    /** As {@link #outage(OutageConfig)}, reporting each finished run to {@code progress}. */
    public static List<SimulationResult> outage(OutageConfig config, Progress progress) {
        double downFromMs = config.outageStart().toNanos() / 1e6;
        double downToMs = downFromMs + config.outageLength().toNanos() / 1e6;
        double offeredDuringOutage = config.offeredRate() * config.outageLength().toNanos() / 1e9;
        return simulate(config.strategies(), config.runs(), config.seed(), progress,
                (strategy, seed) -> new OutageRun(config, strategy, seed).run(),
                (strategy, a) -> a.result("outage", strategy, config.budget(), config.circuitBreaker(), config.clients(),
                        config.runs(), config.offeredRate(), offeredDuringOutage, downFromMs, downToMs));
    }

    /**
     * Runs the {@code metastable} scenario once for each client set-up in the configuration (on
     * the cores, results in the configuration's order). Every set-up runs with the same seed, so
     * they meet the same network delays and client phases.
     */
    public static List<MetastableResult> metastable(MetastableConfig config) {
        return metastable(config, SILENT);
    }

    /** As {@link #metastable(MetastableConfig)}, reporting each finished run to {@code progress}. */
    public static List<MetastableResult> metastable(MetastableConfig config, Progress progress) {
        return metastable(config, config.scenarios().stream().map(MetastableScenario::setup).toList(), progress);
    }

    /**
     * Runs the {@code metastable} scenario of {@code config} once for each of {@code setups} (any
     * combination of retry policy and guards) instead of the configuration's scenarios.
     */
    public static List<MetastableResult> metastable(MetastableConfig config, List<MetastableSetup> setups,
                                                    Progress progress) {
        List<MetastableSetup> chosen = List.copyOf(setups);
        MetastableResult[] results = new MetastableResult[chosen.size()];
        long seed = runSeed(config.seed(), 0);
        ParallelRuns.inOrder(chosen.size(), k -> new MetastableRun(config, chosen.get(k), seed).run(),
                (result, k) -> {
                    results[k] = result;
                    progress.onRun(k + 1, chosen.size());
                });
        return List.of(results);
    }

    /**
     * Runs the {@code layers} scenario once for each set-up in the configuration (on the cores,
     * results in the configuration's order), every set-up with the same seed.
     */
    public static List<LayersResult> layers(LayersConfig config) {
        return layers(config, SILENT);
    }

    /** As {@link #layers(LayersConfig)}, reporting each finished run to {@code progress}. */
    public static List<LayersResult> layers(LayersConfig config, Progress progress) {
        List<LayersSetup> chosen = config.setups();
        LayersResult[] results = new LayersResult[chosen.size()];
        long seed = runSeed(config.seed(), 0);
        ParallelRuns.inOrder(chosen.size(), k -> new LayersRun(config, chosen.get(k), seed).run(),
                (result, k) -> {
                    results[k] = result;
                    progress.onRun(k + 1, chosen.size());
                });
        return List.of(results);
    }

    /**
     * Runs the {@code tail} scenario: each set-up of the configuration at its normal load, then
     * each at its overload (on the cores, results in that order). Every run of one load uses the
     * same seed, so the set-ups meet the same arrivals and network; which request is slow differs
     * once hedges change the order requests are served in.
     */
    public static List<TailResult> tail(TailConfig config) {
        return tail(config, SILENT);
    }

    /** As {@link #tail(TailConfig)}, reporting each finished run to {@code progress}. */
    public static List<TailResult> tail(TailConfig config, Progress progress) {
        List<TailSetup> chosen = config.setups();
        int n = chosen.size();
        TailResult[] results = new TailResult[2 * n];
        ParallelRuns.inOrder(2 * n, k -> new TailRun(config, chosen.get(k % n), k >= n, runSeed(config.seed(), k / n)).run(),
                (result, k) -> {
                    results[k] = result;
                    progress.onRun(k + 1, 2 * n);
                });
        return List.of(results);
    }

    /** One run of a scenario for a strategy and a run seed. */
    @FunctionalInterface
    private interface Run {
        RunStats run(Strategy strategy, long seed);
    }

    /**
     * Runs {@code runs} runs of each strategy (on the cores, combined in order) and turns each
     * strategy's runs into one result.
     */
    private static List<SimulationResult> simulate(List<Strategy> strategies, int runs, long seed, Progress progress,
                                                   Run run, BiFunction<Strategy, Aggregate, SimulationResult> result) {
        int total = strategies.size() * runs;
        List<SimulationResult> results = new ArrayList<>();
        Aggregate[] current = {new Aggregate()};
        ParallelRuns.inOrder(total, k -> run.run(strategies.get(k / runs), runSeed(seed, k % runs)), (stats, k) -> {
            current[0].add(stats);
            progress.onRun(k + 1, total);
            if (k % runs == runs - 1) {
                results.add(result.apply(strategies.get(k / runs), current[0]));
                current[0] = new Aggregate();
            }
        });
        return List.copyOf(results);
    }

    /** Spreads the user's seed and the run index into an independent stream (SplitMix64 finaliser). */
    static long runSeed(long seed, int run) {
        long z = seed + (run + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Sums runs of one strategy and turns them into a {@link SimulationResult}. */
    private static final class Aggregate {
        private int runs;
        private double calls;
        private double completionNanos;
        private double drainNanos;
        private double peakBuckets;
        private double wasted;
        private long arrivalsWhileDown;
        private long started;
        private long succeeded;
        private long gaveUp;
        private long events;
        private double[] loadSums = new double[0];
        private final Map<EndReason, Long> endReasons = new EnumMap<>(EndReason.class);
        private final LongList durations = new LongList();

        void add(RunStats s) {
            runs++;
            calls += s.calls;
            completionNanos += s.completionNanos;
            drainNanos += s.drainNanos;
            peakBuckets += s.peakBucket;
            wasted += s.wasted;
            arrivalsWhileDown += s.arrivalsWhileDown;
            started += s.started;
            succeeded += s.succeeded;
            gaveUp += s.gaveUp;
            events += s.events;
            if (s.loadBuckets.length > loadSums.length) {
                loadSums = Arrays.copyOf(loadSums, s.loadBuckets.length);
            }
            for (int i = 0; i < s.loadBuckets.length; i++) {
                loadSums[i] += s.loadBuckets[i];
            }
            s.endReasons.forEach((reason, n) -> endReasons.merge(reason, n, Long::sum));
            durations.addAll(s.callDurations);
        }

        SimulationResult result(String scenario, Strategy strategy, boolean budget, boolean breaker, int clients,
                                int configuredRuns, double offeredRate, double offeredDuringOutage,
                                double downFromMs, double downToMs) {
            double perSecond = 1000.0 / SimulationResult.BUCKET_MS;
            List<Double> load = new ArrayList<>(loadSums.length);
            for (double sum : loadSums) {
                load.add(sum / runs * perSecond);
            }
            LongFunction<Double> ms = nanos -> nanos / 1e6;
            double loadDuringOutage = offeredDuringOutage == 0 ? 0 : arrivalsWhileDown / (offeredDuringOutage * runs);
            return new SimulationResult(scenario, strategy, budget, breaker, clients, configuredRuns, calls / runs,
                    completionNanos / runs / 1e6, peakBuckets / runs * perSecond, offeredRate, loadDuringOutage,
                    wasted / runs, drainNanos / runs / 1e6, ms.apply(durations.percentile(50)),
                    ms.apply(durations.percentile(90)), ms.apply(durations.percentile(99)), started, succeeded,
                    gaveUp, endReasons, downFromMs, downToMs, load, events);
        }
    }

    /** The breaker's settings, for documentation and display. */
    public static String breakerSettings() {
        return "opens at " + Math.round(Guards.BREAKER_FAILURE_RATE * 100) + "% failures over "
                + Guards.BREAKER_WINDOW.toMillis() + " ms once " + Guards.BREAKER_MINIMUM_CALLS
                + " calls were seen; open " + Guards.BREAKER_OPEN.toMillis() + " ms";
    }
}
