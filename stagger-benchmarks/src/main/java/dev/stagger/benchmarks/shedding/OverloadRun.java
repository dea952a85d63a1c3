package dev.stagger.benchmarks.shedding;

import dev.stagger.benchmarks.HarnessArgs;
import dev.stagger.shedding.AimdLimit;
import dev.stagger.shedding.GradientLimit;
import dev.stagger.shedding.LoadSheddingFilter;
import dev.stagger.shedding.overload.CapacityServer;
import dev.stagger.shedding.overload.OpenLoopLoad;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Load shedding at overload, in a real server (a harness, not JMH). Jetty on 127.0.0.1 serves one
 * endpoint of fixed capacity: {@code --permits} requests at a time, each holding its permit for
 * {@code --service-ms} (capacity = permits / service time). An open-loop generator (plain
 * {@code java.net.http.HttpClient}, HTTP/1.1, no retries) sends GETs at a fixed rate for
 * {@code --seconds}, each with a {@code --timeout-ms} timeout, at most 4,000 outstanding; the first
 * {@code --warmup} seconds are not recorded. After one unrecorded run to warm the JVM up, the
 * scenarios, each on a fresh server, interleaved round by round:
 * <ul>
 *   <li>unloaded: a quarter of capacity, no filter — the reference latency;</li>
 *   <li>{@code --overload} x capacity without a filter;</li>
 *   <li>the same with {@link LoadSheddingFilter} and its default {@link GradientLimit};</li>
 *   <li>the same with an {@link AimdLimit} whose threshold is 1.5 x the service time.</li>
 * </ul>
 * Goodput counts 2xx answers received within the timeout, per second of the recorded part;
 * latencies are those of 2xx answers. With {@code --rounds} above 1 each figure is the median over
 * rounds, with the spread of goodput and p99. All traffic stays on loopback; the run ends by itself.
 */
public final class OverloadRun {
    private OverloadRun() {
    }

    private record Scenario(String name, double loadFactor, Supplier<LoadSheddingFilter> filter) {
    }

    public static void main(String[] args) throws Exception {
        HarnessArgs arguments = new HarnessArgs(args);
        int permits = arguments.positive("--permits", 16);
        Duration service = Duration.ofMillis(arguments.positive("--service-ms", 40));
        double overload = arguments.positive("--overload", 3.0);
        Duration duration = Duration.ofSeconds(arguments.positive("--seconds", 15));
        Duration warmup = Duration.ofSeconds(arguments.positive("--warmup", 5));
        Duration timeout = Duration.ofMillis(arguments.positive("--timeout-ms", 2000));
        int rounds = arguments.positive("--rounds", 1);
        double capacity = permits / (service.toNanos() / 1e9);

        List<Scenario> scenarios = List.of(
                new Scenario("unloaded (0.25x), no filter", 0.25, () -> null),
                new Scenario(fmt("%.0fx, no filter", overload), overload, () -> null),
                new Scenario(fmt("%.0fx, GradientLimit", overload), overload,
                        () -> LoadSheddingFilter.builder("overload").build()),
                new Scenario(fmt("%.0fx, AimdLimit %d ms", overload, service.toMillis() * 3 / 2), overload,
                        () -> LoadSheddingFilter.builder("overload")
                                .limit(AimdLimit.builder(service.multipliedBy(3).dividedBy(2)).build()).build()));
        Map<String, List<OpenLoopLoad.Result>> results = new LinkedHashMap<>();
        scenarios.forEach(s -> results.put(s.name(), new ArrayList<>()));

        String loadBefore = loadAverage();
        System.out.printf(Locale.ROOT, "capacity %d permits x %d ms = %.0f requests/s; %d s per scenario (%d s warmup), "
                        + "timeout %d ms; load average before: %s%n", permits, service.toMillis(), capacity,
                duration.toSeconds(), warmup.toSeconds(), timeout.toMillis(), loadBefore);
        // JIT-compile the server, the filter and the client before anything is measured, so the
        // unloaded reference is not the slowest scenario merely by running first
        try (CapacityServer server = CapacityServer.start(permits, service, LoadSheddingFilter.builder("warmup").build())) {
            new OpenLoopLoad(overload * capacity, warmup.plusSeconds(1), warmup, timeout, 4_000).run(server.uri());
        }
        for (int round = 1; round <= rounds; round++) {
            for (Scenario s : scenarios) {
                LoadSheddingFilter filter = s.filter().get();
                OpenLoopLoad.Result r;
                String limit;
                try (CapacityServer server = filter == null ? CapacityServer.start(permits, service)
                        : CapacityServer.start(permits, service, filter);
                     LimitSampler sampler = new LimitSampler(filter, warmup)) {
                    r = new OpenLoopLoad(s.loadFactor() * capacity, duration, warmup, timeout, 4_000).run(server.uri());
                    limit = sampler.summary();
                }
                results.get(s.name()).add(r);
                System.out.printf(Locale.ROOT, "round %d: %-28s %s%s%n", round, s.name(), r, limit);
            }
        }
        String loadAfter = loadAverage();

        System.out.printf(Locale.ROOT, "%n%-28s %9s %9s %6s %8s %8s %9s %9s %7s %8s %8s %11s%n", "scenario", "offered/s",
                "goodput/s", "of cap", "p50 ms", "p99 ms", "p99/u.p99", "p99/u.p50", "shed", "timeouts", "not sent",
                "Retry-After");
        double unloadedP99 = median(results.get(scenarios.get(0).name()), r -> millis(r.okLatency(0.99)));
        double unloadedP50 = median(results.get(scenarios.get(0).name()), r -> millis(r.okLatency(0.5)));
        for (Scenario s : scenarios) {
            List<OpenLoopLoad.Result> rs = results.get(s.name());
            double goodput = median(rs, OpenLoopLoad.Result::goodputPerSecond);
            double p99 = median(rs, r -> millis(r.okLatency(0.99)));
            System.out.printf(Locale.ROOT, "%-28s %9.0f %9.0f %5.0f%% %8.1f %8.1f %8.2fx %8.2fx %7.0f %8.0f %8.0f %11s%n",
                    s.name(), s.loadFactor() * capacity, goodput, 100 * goodput / capacity,
                    median(rs, r -> millis(r.okLatency(0.5))), p99, p99 / unloadedP99, p99 / unloadedP50,
                    median(rs, r -> (double) r.shed), median(rs, r -> (double) r.timedOut),
                    median(rs, r -> (double) r.notSent), retryAfterRange(rs));
            if (rounds > 1) {
                System.out.printf(Locale.ROOT, "%-28s %19s %6s %8s %8s%n", "", spread(rs, OpenLoopLoad.Result::goodputPerSecond),
                        "", "", spread(rs, r -> millis(r.okLatency(0.99))));
            }
        }
        System.out.printf(Locale.ROOT, "load average before: %s, after: %s (2 cores: above ~1.5 the figures are not "
                + "trustworthy)%n", loadBefore, loadAfter);

        List<OpenLoopLoad.Result> gradient = results.get(scenarios.get(2).name());
        List<OpenLoopLoad.Result> none = results.get(scenarios.get(1).name());
        double goodputShare = median(gradient, OpenLoopLoad.Result::goodputPerSecond) / capacity;
        double p99Ratio = median(gradient, r -> millis(r.okLatency(0.99))) / unloadedP99;
        System.out.printf(Locale.ROOT, "%nGoals, this run:%n");
        System.out.printf(Locale.ROOT, "  with the filter, goodput >= 90 %% of capacity: %.0f %% -> %s%n", 100 * goodputShare,
                goodputShare >= 0.9 ? "met" : "NOT MET");
        System.out.printf(Locale.ROOT, "  with the filter, p99 of admitted requests <= 2x unloaded p99: %.2fx -> %s%n", p99Ratio,
                p99Ratio <= 2 ? "met" : "NOT MET");
        double timedOutShare = median(none, r -> r.timedOut / (double) Math.max(1, r.sent));
        System.out.printf(Locale.ROOT, "  without it, clients time out: %.0f %% of requests -> %s%n", 100 * timedOutShare,
                timedOutShare > 0.5 ? "shown" : "NOT SHOWN");
    }

    /** Samples the filter's limit every 50 ms after the warmup, to show how steady it was. */
    private static final class LimitSampler implements AutoCloseable {
        private final LoadSheddingFilter filter;
        private final Thread thread;
        private volatile int min = Integer.MAX_VALUE;
        private volatile int max;

        LimitSampler(LoadSheddingFilter filter, Duration warmup) {
            this.filter = filter;
            this.thread = new Thread(() -> {
                try {
                    Thread.sleep(warmup.toMillis());
                    while (!Thread.currentThread().isInterrupted()) {
                        int limit = filter.limit();
                        min = Math.min(min, limit);
                        max = Math.max(max, limit);
                        Thread.sleep(50);
                    }
                } catch (InterruptedException stopped) {
                    // the run is over
                }
            }, "limit-sampler");
            thread.setDaemon(true);
            if (filter != null) {
                thread.start();
            }
        }

        String summary() {
            return filter == null || max == 0 ? "" : fmt(" limit %d..%d after warmup", min, max);
        }

        @Override
        public void close() {
            thread.interrupt();
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String retryAfterRange(List<OpenLoopLoad.Result> rs) {
        long min = rs.stream().mapToLong(r -> r.minRetryAfter).filter(v -> v >= 0).min().orElse(-1);
        long max = rs.stream().mapToLong(r -> r.maxRetryAfter).max().orElse(-1);
        return min < 0 ? "-" : min + ".." + max + " s";
    }

    private static double millis(Duration d) {
        return d.toNanos() / 1e6;
    }

    private static double median(List<OpenLoopLoad.Result> rs, Function<OpenLoopLoad.Result, Double> f) {
        double[] v = rs.stream().mapToDouble(f::apply).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String spread(List<OpenLoopLoad.Result> rs, Function<OpenLoopLoad.Result, Double> f) {
        double[] v = rs.stream().mapToDouble(f::apply).sorted().toArray();
        return fmt("(%.0f-%.0f)", v[0], v[v.length - 1]);
    }

    private static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (Exception e) {
            return "unknown";
        }
    }

    private static String fmt(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
