package dev.stagger.cli;

import dev.stagger.sim.ContentionConfig;
import dev.stagger.sim.LayersConfig;
import dev.stagger.sim.LayersResult;
import dev.stagger.sim.LayersSetup;
import dev.stagger.sim.MetastableConfig;
import dev.stagger.sim.MetastableResult;
import dev.stagger.sim.MetastableScenario;
import dev.stagger.sim.OutageConfig;
import dev.stagger.sim.Simulation;
import dev.stagger.sim.SimulationResult;
import dev.stagger.sim.Strategy;
import dev.stagger.sim.SvgChart;
import dev.stagger.sim.TailConfig;
import dev.stagger.sim.TailResult;
import dev.stagger.sim.TailSetup;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code stagger simulate}: compare retry strategies in the deterministic simulator. */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Simulate many clients retrying against one server with Stagger's real retry code, and compare backoff strategies: calls, completion time, load.",
            "",
            "Scenarios:",
            "  contention  N clients race to write one optimistic-concurrency",
            "              register (the AWS 'Exponential Backoff and Jitter' model:",
            "              base 5 ms, cap 2 s, network delay 10 +- 2 ms)",
            "  outage      N clients at 10 calls/s each; a server of 1.5x capacity",
            "              is down from 1 s to 4 s; 5 attempts, waits 100 ms..2 s",
            "  metastable  a server of 1000 requests/s with a 2 s queue at 90 %% load loses",
            "              half its workers from 10 s to 20 s; attempts time out after 1 s.",
            "              Compares naive retries, exponential, the defaults, + budget,",
            "              + adaptive throttle, + server shedding: goodput, recovery, p99",
            "  layers      users call a chain of --tiers services (3), each retrying its",
            "              downstream --attempts times (3); the bottom is down from 5 s to",
            "              25 s (or fails --failure-rate of requests). Compares naive",
            "              (every tier retries: attempts^tiers at the bottom), deadline,",
            "              one-layer and stagger (only the tier next to the failure",
            "              retries, the user's deadline propagated, a budget per tier):",
            "              attempts at the bottom per request, late ones, latency, success",
            "  tail        a server of 20 workers whose requests take 10 ms, --tail-share",
            "              (2 %%) of them --tail-factor (20) times longer, at 50 %% and 95 %%",
            "              of capacity. Compares no hedging, a fixed delay (20 ms) and the",
            "              95th percentile of recent latencies, each with and without a",
            "              retry budget: p50, p99, p999 and extra requests",
            "",
            "Examples:",
            "  stagger simulate",
            "  stagger simulate --clients 100 --runs 100 --strategies exponential,full-jitter",
            "  stagger simulate --scenario outage --budget --svg outage.svg",
            "  stagger simulate --scenario outage --breaker --json | jq .results",
            "  stagger simulate --scenario metastable --svg metastable.svg",
            "  stagger simulate --scenario layers --tiers 4 --attempts 3 --svg layers.svg",
            "  stagger simulate --scenario tail --tail-share 0.05 --tail-factor 10 --svg tail.svg",
            ""},
        footerHeading = "%nExit codes:%n",
        footer = {"  0  done", "  1  the chart cannot be written (checked before simulating)", "  2  bad arguments"})
final class SimulateCommand implements Callable<Integer> {
    private static final int MAX_CLIENTS = 10_000;
    private static final int MAX_RUNS = 100_000;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Option(names = "--scenario", defaultValue = "contention", paramLabel = "NAME",
            description = "contention | outage | metastable | layers | tail (default ${DEFAULT-VALUE}).")
    String scenario;

    @Option(names = "--clients", defaultValue = "100", paramLabel = "N", description = "Clients (default ${DEFAULT-VALUE}).")
    int clients;

    @Option(names = "--runs", defaultValue = "10", paramLabel = "R",
            description = "Runs averaged per strategy (default ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--strategies", split = ",", paramLabel = "LIST",
            description = "Strategies to compare (default all): none, exponential, full-jitter, equal-jitter, "
                    + "decorrelated-jitter, proportional-jitter, polly-v2.")
    @Nullable List<String> strategies;

    @Option(names = "--setups", split = ",", paramLabel = "LIST",
            description = "metastable: the client set-ups to compare (default all): naive, exponential, defaults, "
                    + "budget, throttle, shedding. layers: naive, deadline, one-layer, stagger. "
                    + "tail: none, fixed, fixed+budget, percentile, percentile+budget.")
    @Nullable List<String> setups;

    @Option(names = "--tiers", paramLabel = "N",
            description = "layers: services between the user and the failing bottom, the edge included (default 3, at most 6).")
    @Nullable Integer tiers;

    @Option(names = "--attempts", paramLabel = "N",
            description = "layers: attempts each tier makes on its downstream (default 3; attempts^tiers at most 1024).")
    @Nullable Integer attempts;

    @Option(names = "--failure-rate", paramLabel = "R",
            description = "layers: instead of the outage, the bottom fails this share of requests (0 to 1) all run long.")
    @Nullable Double failureRate;

    @Option(names = "--tail-share", paramLabel = "S",
            description = "tail: the share of requests in the slow tail, 0 to below 1 (default 0.02).")
    @Nullable Double tailShare;

    @Option(names = "--tail-factor", paramLabel = "F",
            description = "tail: how many times slower a tail request is, at least 1 (default 20).")
    @Nullable Double tailFactor;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "S",
            description = "Random seed; the same seed gives the same numbers (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--budget", description = "Guard retries with a shared retry budget (ratio 0.1, 100 tokens, 10/s floor).")
    boolean budget;

    @Option(names = "--breaker", description = "Guard attempts with a shared circuit breaker (50%% failures over 2 s, open 500 ms).")
    boolean breaker;

    @Option(names = "--json", description = "Print the results as JSON on stdout instead of a table.")
    boolean json;

    @Option(names = "--svg", paramLabel = "FILE",
            description = "Also write an SVG chart: load over time (outage), calls per strategy (contention), goodput over "
                    + "time (metastable), attempts at the bottom per request (layers) or latency per set-up (tail).")
    @Nullable Path svg;

    @Option(names = "--no-progress", description = "Never draw the progress bar on stderr.")
    boolean noProgress;

    @Override
    public Integer call() throws Exception {
        if (!scenario.equals("tail") && (tailShare != null || tailFactor != null)) {
            throw bad("--tail-share and --tail-factor are for --scenario tail");
        }
        if (scenario.equals("tail")) {
            return tail();
        }
        if (scenario.equals("metastable")) {
            return metastable();
        }
        if (scenario.equals("layers")) {
            return layers();
        }
        if (tiers != null || attempts != null || failureRate != null) {
            throw bad("--tiers, --attempts and --failure-rate are for --scenario layers");
        }
        List<Strategy> chosen = validate();
        PrintStream err = System.err;
        if (svgUnwritable(err)) {
            return 1;
        }
        SimProgressBar bar = new SimProgressBar(err, !noProgress && System.console() != null);
        long t0 = System.nanoTime();
        List<SimulationResult> results;
        if (scenario.equals("outage")) {
            OutageConfig config = OutageConfig.defaults().withClients(clients).withRuns(runs).withSeed(seed)
                    .withStrategies(chosen).withBudget(budget).withCircuitBreaker(breaker);
            results = Simulation.outage(config, bar::update);
        } else {
            ContentionConfig config = ContentionConfig.defaults().withClients(clients).withRuns(runs).withSeed(seed)
                    .withStrategies(chosen).withBudget(budget).withCircuitBreaker(breaker);
            results = Simulation.contention(config, bar::update);
        }
        long elapsed = System.nanoTime() - t0;
        bar.finish();
        String title = scenario.equals("outage")
                ? "Load during an outage: " + clients + " clients, mean of " + runs + " runs"
                : "Contention: " + clients + " clients, mean of " + runs + " runs";
        return print(new SimReport(scenario, clients, runs, seed, results, elapsed), () -> SvgChart.render(title, results), err);
    }

    /** The metastable scenario: one run per client set-up, reported per second of simulated time. */
    private int metastable() throws Exception {
        List<MetastableScenario> chosen = new ArrayList<>();
        if (tiers != null || attempts != null || failureRate != null) {
            throw bad("--tiers, --attempts and --failure-rate are for --scenario layers");
        }
        if (strategies != null || budget || breaker) {
            throw bad("--scenario metastable compares client set-ups: use --setups, not --strategies, --budget or --breaker");
        }
        for (String s : setups == null ? List.<String>of() : setups) {
            try {
                chosen.add(MetastableScenario.parse(s));
            } catch (IllegalArgumentException e) {
                throw bad("--setups: " + e.getMessage());
            }
        }
        PrintStream err = System.err;
        if (svgUnwritable(err)) {
            return 1;
        }
        MetastableConfig config = MetastableConfig.defaults().withSeed(seed);
        if (!chosen.isEmpty()) {
            config = config.withScenarios(chosen);
        }
        SimProgressBar bar = new SimProgressBar(err, !noProgress && System.console() != null);
        long t0 = System.nanoTime();
        List<MetastableResult> results = Simulation.metastable(config, bar::update);
        long elapsed = System.nanoTime() - t0;
        bar.finish();
        return print(new MetastableReport(config, results, elapsed),
                () -> SvgChart.goodputOverTime("Metastable failure: goodput when half the workers go for 10 s", results), err);
    }

    /** The layers scenario: one run per set-up, attempts per request counted down the chain. */
    private int layers() throws Exception {
        if (strategies != null || budget || breaker) {
            throw bad("--scenario layers compares set-ups: use --setups, not --strategies, --budget or --breaker");
        }
        List<LayersSetup> chosen = new ArrayList<>();
        for (String s : setups == null ? List.<String>of() : setups) {
            try {
                chosen.add(LayersSetup.parse(s));
            } catch (IllegalArgumentException e) {
                throw bad("--setups: " + e.getMessage());
            }
        }
        LayersConfig config;
        try {
            config = LayersConfig.defaults().withSeed(seed);
            config = config.withChain(tiers == null ? config.tiers() : tiers, attempts == null ? config.attempts() : attempts);
            if (failureRate != null) {
                config = config.withFailures(Duration.ZERO, Duration.ZERO, failureRate);
            }
            if (!chosen.isEmpty()) {
                config = config.withSetups(chosen);
            }
        } catch (IllegalArgumentException e) {
            throw bad("--scenario layers: " + e.getMessage());
        }
        PrintStream err = System.err;
        if (svgUnwritable(err)) {
            return 1;
        }
        SimProgressBar bar = new SimProgressBar(err, !noProgress && System.console() != null);
        long t0 = System.nanoTime();
        List<LayersResult> results = Simulation.layers(config, bar::update);
        long elapsed = System.nanoTime() - t0;
        bar.finish();
        String title = "Retries through " + config.tiers() + " tiers of " + config.attempts()
                + " attempts: attempts at the bottom per request (" + LayersReport.failure(config) + ")";
        return print(new LayersReport(config, results, elapsed), () -> SvgChart.attemptsPerLayer(title, results), err);
    }

    /** The tail scenario: one run per set-up at each load, latency percentiles and extra requests. */
    private int tail() throws Exception {
        if (strategies != null || budget || breaker) {
            throw bad("--scenario tail compares set-ups: use --setups, not --strategies, --budget or --breaker");
        }
        if (tiers != null || attempts != null || failureRate != null) {
            throw bad("--tiers, --attempts and --failure-rate are for --scenario layers");
        }
        List<TailSetup> chosen = new ArrayList<>();
        for (String s : setups == null ? List.<String>of() : setups) {
            try {
                chosen.add(TailSetup.parse(s));
            } catch (IllegalArgumentException e) {
                throw bad("--setups: " + e.getMessage());
            }
        }
        TailConfig config;
        try {
            config = TailConfig.defaults().withSeed(seed);
            config = config.withTail(tailShare == null ? config.tailShare() : tailShare,
                    tailFactor == null ? config.tailFactor() : tailFactor);
            if (!chosen.isEmpty()) {
                config = config.withSetups(chosen);
            }
        } catch (IllegalArgumentException e) {
            throw bad("--scenario tail: " + e.getMessage());
        }
        PrintStream err = System.err;
        if (svgUnwritable(err)) {
            return 1;
        }
        SimProgressBar bar = new SimProgressBar(err, !noProgress && System.console() != null);
        long t0 = System.nanoTime();
        List<TailResult> results = Simulation.tail(config, bar::update);
        long elapsed = System.nanoTime() - t0;
        bar.finish();
        String title = "Hedging a long tail: " + TailReport.server(config);
        return print(new TailReport(config, results, elapsed), () -> SvgChart.tailLatency(title, results), err);
    }

    /** Whether the chart asked for cannot be written: known before a long simulation, not after it. */
    private boolean svgUnwritable(PrintStream err) {
        if (svg == null) {
            return false;
        }
        Optional<String> problem = FileProblems.whyNotWritable(svg);
        problem.ifPresent(p -> err.println("stagger simulate: cannot write " + svg + ": " + p));
        return problem.isPresent();
    }

    /** Prints a scenario's report (table or JSON) and writes its chart when asked: the exit code. */
    private int print(ScenarioReport report, Supplier<String> chart, PrintStream err) throws Exception {
        if (json) {
            report.json(System.out);
        } else {
            report.table(System.out);
        }
        System.out.flush();
        if (svg != null) {
            try {
                Files.writeString(svg, chart.get());
            } catch (IOException e) {
                err.println("stagger simulate: cannot write " + svg + ": " + FileProblems.reason(e, svg));
                return 1;
            }
            err.println("stagger simulate: wrote " + svg);
        }
        return 0;
    }

    private List<Strategy> validate() {
        if (!scenario.equals("contention") && !scenario.equals("outage")) {
            throw bad("--scenario must be contention, outage, metastable, layers or tail, got '" + scenario + "'");
        }
        if (setups != null) {
            throw bad("--setups is for --scenario metastable, layers or tail");
        }
        if (clients < 1 || clients > MAX_CLIENTS) {
            throw bad("--clients must be between 1 and " + MAX_CLIENTS + ", got " + clients);
        }
        if (runs < 1 || runs > MAX_RUNS) {
            throw bad("--runs must be between 1 and " + MAX_RUNS + ", got " + runs);
        }
        if (strategies == null || strategies.isEmpty()) {
            return List.of(Strategy.values());
        }
        List<Strategy> chosen = new ArrayList<>();
        for (String s : strategies) {
            try {
                chosen.add(Strategy.parse(s));
            } catch (IllegalArgumentException e) {
                throw bad("--strategies: " + e.getMessage());
            }
        }
        return chosen;
    }

    private CommandLine.ParameterException bad(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }
}
