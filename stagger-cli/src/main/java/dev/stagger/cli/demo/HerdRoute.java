package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.sim.ContentionConfig;
import dev.stagger.sim.OutageConfig;
import dev.stagger.sim.Simulation;
import dev.stagger.sim.SimulationResult;
import dev.stagger.sim.Strategy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * Panel 2: the simulator (real backoff code on a virtual clock). Bars: the AWS contention model;
 * lines: load on a server through an outage, without jitter, with jitter, and with a budget.
 * The largest runs take seconds, so {@code herd} starts one in the background and
 * {@code herd-progress} reports how many runs are done, then the result. Starting another
 * simulation cancels the one before (one page, one chart).
 */
final class HerdRoute implements AutoCloseable {
    private static final List<Strategy> COMPARED = List.of(Strategy.NONE, Strategy.EXPONENTIAL, Strategy.FULL_JITTER,
            Strategy.EQUAL_JITTER, Strategy.DECORRELATED_JITTER);
    /** The outage load chart: one run each of exponential and full jitter, and one of full jitter with a budget. */
    private static final int OUTAGE_RUNS = 3;

    record Row(String strategy, double calls, double completionMs) {
    }

    record Series(String strategy, int bucketMs, List<Double> points) {
    }

    record Answer(int clients, int runs, List<Row> results, List<Series> load, long events, int downFromMs, int downToMs) {
    }

    record Started(long id, int total) {
    }

    record Progress(long id, int done, int total, boolean finished, @Nullable Answer result, @Nullable String error) {
    }

    /** One simulation in the background: its progress, then its answer or failure. */
    private static final class Job {
        final long id;
        final int total;
        volatile int done;
        volatile boolean cancelled;
        volatile @Nullable Answer answer;
        volatile @Nullable String error;

        Job(long id, int total) {
            this.id = id;
            this.total = total;
        }

        Progress progress() {
            return new Progress(id, done, total, answer != null || error != null, answer, error);
        }
    }

    private final ExecutorService simulator = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "stagger-demo-herd");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong ids = new AtomicLong();
    private final AtomicReference<Job> current = new AtomicReference<>();

    /** Starts a simulation and returns its id and number of runs. */
    Started start(JsonNode r) {
        int clients = Json.intField(r, "clients", 100, 2, 500);
        int runs = Json.intField(r, "runs", 5, 1, 50);
        long seed = Json.intField(r, "seed", 1, 0, Integer.MAX_VALUE);
        Job job = new Job(ids.incrementAndGet(), COMPARED.size() * runs + OUTAGE_RUNS);
        Job before = current.getAndSet(job);
        if (before != null) {
            before.cancelled = true;
        }
        simulator.execute(() -> {
            try {
                job.answer = simulate(job, clients, runs, seed);
            } catch (CancellationException replaced) {
                job.error = "replaced by a newer simulation";
            } catch (RuntimeException | Error e) {
                job.error = e.toString();
            }
        });
        return new Started(job.id, job.total);
    }

    /** The progress of simulation {@code id} (the latest one when absent), with its answer once finished. */
    Progress progress(JsonNode r) {
        Job job = current.get();
        long id = Json.intField(r, "id", 0, 0, Integer.MAX_VALUE);
        if (job == null || (id != 0 && job.id != id)) {
            throw new IllegalArgumentException("id must name the latest simulation, got " + id);
        }
        return job.progress();
    }

    private static Answer simulate(Job job, int clients, int runs, long seed) {
        long events = 0;
        List<Row> rows = new ArrayList<>();
        for (SimulationResult s : Simulation.contention(ContentionConfig.defaults().withClients(clients).withRuns(runs)
                .withSeed(seed).withStrategies(COMPARED), (done, total) -> advance(job, done))) {
            rows.add(new Row(s.label(), s.calls(), s.completionMs()));
            events += s.events();
        }
        int offset = COMPARED.size() * runs;
        OutageConfig outage = OutageConfig.defaults().withClients(clients).withRuns(1).withSeed(seed)
                .withStrategies(List.of(Strategy.EXPONENTIAL, Strategy.FULL_JITTER));
        List<SimulationResult> all = new ArrayList<>(Simulation.outage(outage, (done, total) -> advance(job, offset + done)));
        all.addAll(Simulation.outage(outage.withStrategies(List.of(Strategy.FULL_JITTER)).withBudget(true),
                (done, total) -> advance(job, offset + 2 + done)));
        List<Series> load = new ArrayList<>();
        for (SimulationResult s : all) {
            load.add(new Series(s.label(), SimulationResult.BUCKET_MS, s.load()));
            events += s.events();
        }
        SimulationResult first = all.get(0);
        return new Answer(clients, runs, rows, load, events, (int) first.downFromMs(), (int) first.downToMs());
    }

    private static void advance(Job job, int done) {
        if (job.cancelled) {
            throw new CancellationException();
        }
        job.done = done;
    }

    @Override
    public void close() {
        Job job = current.get();
        if (job != null) {
            job.cancelled = true;
        }
        simulator.shutdownNow();
    }
}
