package dev.stagger.benchmarks.sim;

import dev.stagger.benchmarks.harness.CpuProbe;
import dev.stagger.benchmarks.harness.HeapProbe;
import dev.stagger.sim.ContentionConfig;
import dev.stagger.sim.Simulation;
import dev.stagger.sim.SimulationResult;
import dev.stagger.sim.Strategy;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How fast {@code stagger-sim} runs the {@code contention} scenario: simulated events per second
 * of wall time at each client count, the wall time of the whole batch of runs, and the live heap
 * per simulated client while a run is under way.
 *
 * <p>Events are what the simulator reports ({@link SimulationResult#events()}: tasks run by the
 * run's event loop — messages, server replies and the engine's backoff waits). Each size runs
 * once unmeasured first (compilation), then {@code --runs} runs of one strategy are timed as one
 * {@link Simulation#contention} call, which may use every core.
 *
 * <p>Live heap per client: one more run of the largest size on its own thread; early in it (an
 * eighth of a run's measured wall time, at most 500 ms; sooner if the run ended first), one full
 * GC through a class histogram (stop-the-world, so the snapshot is consistent) and the heap in
 * use minus the settled heap before the run, divided by the clients, with the classes held.
 * Clients that already finished are not held, so this is an upper bound per client still running.
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+UseG1GC -XX:+AlwaysPreTouch -cp benchmarks.jar \
 *     dev.stagger.benchmarks.sim.SimulatorSpeed --clients 100,1000,10000 --runs 100
 * </pre>
 *
 * <p>Output: a table on standard error, one JSON object per size on standard output.
 */
public final class SimulatorSpeed {

    private SimulatorSpeed() {
    }

    public static void main(String[] args) throws Exception {
        List<Integer> sizes = List.of(100, 1_000, 10_000);
        int runs = 100;
        Strategy strategy = Strategy.FULL_JITTER;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--clients":
                    List<Integer> parsed = new ArrayList<>();
                    for (String s : args[++i].split(",")) {
                        parsed.add(Integer.parseInt(s.trim()));
                    }
                    sizes = parsed;
                    break;
                case "--runs": runs = Integer.parseInt(args[++i]); break;
                case "--strategy": strategy = strategy(args[++i]); break;
                default: throw new IllegalArgumentException("unknown argument: " + args[i]
                        + " (expected [--clients 100,1000,10000] [--runs 100] [--strategy full-jitter])");
            }
        }
        System.err.printf(Locale.ROOT, "contention, %s, %d runs per size, %d cores, JDK %s%n", strategy.label(), runs,
                Runtime.getRuntime().availableProcessors(), Runtime.version());
        System.err.printf(Locale.ROOT, "  %8s %14s %12s %12s %14s %12s %18s%n", "clients", "events", "wall ms",
                "ms per run", "events/s", "CPU ms", "events/CPU-second");
        double lastRunMillis = 0;
        String goal = null;
        for (int clients : sizes) {
            ContentionConfig config = ContentionConfig.defaults().withClients(clients).withStrategies(List.of(strategy));
            Simulation.contention(config.withRuns(1)); // compile before timing
            long c0 = CpuProbe.processNanos(); // the whole process: simulation threads, GC and compiler
            long t0 = System.nanoTime();
            SimulationResult r = Simulation.contention(config.withRuns(runs)).get(0);
            long wall = System.nanoTime() - t0;
            long cpu = CpuProbe.processNanos() - c0;
            lastRunMillis = wall / 1e6 / runs;
            if (clients == 10_000 && runs == 100) {
                goal = String.format(Locale.ROOT, "Goal: 10,000 clients x 100 runs in under 60 s: %.1f s -> %s",
                        wall / 1e9, wall < 60e9 ? "met" : "NOT MET");
            }
            System.err.printf(Locale.ROOT, "  %8d %14d %12.0f %12.1f %14.0f %12.0f %18.0f%n", clients, r.events(),
                    wall / 1e6, lastRunMillis, r.events() / (wall / 1e9), cpu / 1e6, r.events() / (cpu / 1e9));
            System.out.printf(Locale.ROOT, "{\"clients\":%d,\"runs\":%d,\"strategy\":\"%s\",\"events\":%d,"
                            + "\"wallMillis\":%.1f,\"eventsPerSecond\":%.0f,\"cpuMillis\":%.1f,"
                            + "\"eventsPerCpuSecond\":%.0f,\"calls\":%.1f,\"completionMs\":%.3f}%n",
                    clients, runs, strategy.label(), r.events(), wall / 1e6, r.events() / (wall / 1e9), cpu / 1e6,
                    r.events() / (cpu / 1e9), r.calls(), r.completionMs());
        }
        int largest = sizes.get(sizes.size() - 1);
        ContentionConfig one = ContentionConfig.defaults().withClients(largest).withRuns(1)
                .withStrategies(List.of(strategy));
        long perClient = -1;
        // early in a run (nearly every client still running); sooner again if the run ended first
        for (long after = (long) Math.min(500, lastRunMillis / 8); perClient < 0 && after >= 1; after /= 4) {
            perClient = liveHeapPerClient(one, after);
        }
        System.err.printf(Locale.ROOT, "  live heap per simulated client (%d clients, early in a run): %d B%n",
                largest, perClient);
        System.out.printf(Locale.ROOT, "{\"clients\":%d,\"liveHeapBytesPerClient\":%d}%n", largest, perClient);
        if (goal != null) {
            System.err.println(goal);
        }
    }

    private static long liveHeapPerClient(ContentionConfig config, long afterMillis) throws InterruptedException {
        HeapProbe.Histogram before = HeapProbe.histogram();
        long baseline = HeapProbe.settledUsedBytes();
        Long snapshot = null;
        String classes = null;
        Thread run = new Thread(() -> Simulation.contention(config), "simulation");
        run.start();
        Thread.sleep(Math.max(1, afterMillis));
        if (run.isAlive()) {
            HeapProbe.Histogram during = HeapProbe.histogram(); // a full, stop-the-world GC
            snapshot = java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            classes = during.minus(before).topPerCall(config.clients(), 8);
        }
        run.join();
        if (classes != null) {
            System.err.println("  live objects per simulated client at that moment (class histogram diff):");
            for (String entry : classes.substring(2, classes.length() - 2).split("\\},\\{")) {
                System.err.println("    " + entry.replace("\"", ""));
            }
        }
        return snapshot == null ? -1 : (snapshot - baseline) / config.clients();
    }

    private static Strategy strategy(String label) {
        for (Strategy s : Strategy.values()) {
            if (s.label().equals(label)) {
                return s;
            }
        }
        throw new IllegalArgumentException("strategy must be one of the simulator's labels, got " + label);
    }
}
