package dev.stagger.jobs.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;

/**
 * The pool's completer thread: stores the outcomes handlers produce, in batches (one transaction
 * for whatever has accumulated, so one commit covers many jobs), and reports each once stored. A
 * batch that fails is kept and stored again after reconnecting. Runs on one thread, in a
 * {@link ReconnectingLoop}, until {@link #finish()} and everything before it is stored.
 *
 * <p>The fetcher stores successes with its next claim (see {@link JobStore#completeAndClaim}):
 * while it says it will claim again soon
 * ({@code carriedElsewhere}), this thread leaves successes to it and stores only the other
 * outcomes; when the fetcher goes idle, waits for room, fails or stops, it calls {@link #recheck()}
 * and this thread stores whatever successes are left. Thread-safe: handlers add, the fetcher takes
 * and gives back, this thread stores.
 */
public final class Completer implements ReconnectingLoop.Step {
    /** Most outcomes stored in one transaction (and taken by the fetcher for one claim). */
    public static final int MAX_BATCH = 1000;

    private final JobStore store;
    private final PoolEvents events;
    private final IntConsumer onStored;
    private final BooleanSupplier carriedElsewhere;
    private final Set<Long> held;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<Outcome> successes = new ArrayDeque<>();
    private final ArrayDeque<Outcome> others = new ArrayDeque<>();
    private boolean ended;
    private final List<Outcome> batch = new ArrayList<>();
    private final Statements statements = new Statements();
    private boolean endSeen;
    private volatile boolean finished;

    /**
     * @param onStored told how many outcomes each stored batch held
     * @param carriedElsewhere true while the fetcher will store successes with its next claim
     * @param held the ids of the jobs the pool holds (see {@link Heartbeat}); an outcome's job
     *             leaves it once the outcome is stored, by this thread or with a claim
     */
    public Completer(JobStore store, PoolEvents events, IntConsumer onStored, BooleanSupplier carriedElsewhere,
                     Set<Long> held) {
        this.store = store;
        this.events = events;
        this.onStored = onStored;
        this.carriedElsewhere = carriedElsewhere;
        this.held = held;
    }

    /**
     * Queues an outcome to store. A success the fetcher will carry does not wake this thread: it
     * would only find nothing to do and wait again, a wasted thread switch per job while the pool is
     * busy. If the fetcher stops carrying, {@link #recheck()} wakes it.
     */
    public void add(Outcome o) {
        lock.lock();
        try {
            if (o.kind() == Outcome.Kind.SUCCEEDED) {
                successes.add(o);
                if (carriedElsewhere.getAsBoolean()) {
                    return;
                }
            } else {
                others.add(o);
            }
            changed.signal();
        } finally {
            lock.unlock();
        }
    }

    /** No outcome follows: store what is queued, then stop. */
    public void finish() {
        lock.lock();
        try {
            ended = true;
            changed.signal();
        } finally {
            lock.unlock();
        }
    }

    /** The fetcher stopped carrying successes: store the ones waiting. */
    public void recheck() {
        lock.lock();
        try {
            changed.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Takes up to {@code max} waiting successes for the fetcher to store with its claim. */
    public List<Outcome> takeSuccesses(int max) {
        lock.lock();
        try {
            List<Outcome> taken = new ArrayList<>(Math.min(max, successes.size()));
            while (taken.size() < max && !successes.isEmpty()) {
                taken.add(successes.poll());
            }
            return taken;
        } finally {
            lock.unlock();
        }
    }

    /** The fetcher could not store these: this thread stores them (the fetcher does not take them again). */
    public void giveBack(List<Outcome> outcomes) {
        if (outcomes.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            others.addAll(outcomes);
            changed.signal();
        } finally {
            lock.unlock();
        }
    }

    /** The fetcher stored these; {@code applied} says which this pool still owned. */
    public void storedElsewhere(List<Outcome> outcomes, boolean[] applied) {
        report(outcomes, applied);
    }

    public boolean finished() {
        return finished;
    }

    @Override
    public void run(Connection c) throws SQLException, InterruptedException {
        if (batch.isEmpty()) {
            take();
        }
        if (!batch.isEmpty()) {
            boolean[] applied = store.apply(statements, c, batch);
            report(batch, applied);
            batch.clear();
        }
        if (endSeen) {
            finished = true;
        }
    }

    /** Waits for outcomes this thread should store, and moves up to a batch of them into {@link #batch}. */
    private void take() throws InterruptedException {
        lock.lock();
        try {
            while (others.isEmpty() && !ended && (successes.isEmpty() || carriedElsewhere.getAsBoolean())) {
                changed.await();
            }
            while (batch.size() < MAX_BATCH && !others.isEmpty()) {
                batch.add(others.poll());
            }
            if (ended || !carriedElsewhere.getAsBoolean()) {
                while (batch.size() < MAX_BATCH && !successes.isEmpty()) {
                    batch.add(successes.poll());
                }
            }
            endSeen = ended && others.isEmpty() && successes.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    private void report(List<Outcome> outcomes, boolean[] applied) {
        for (Outcome o : outcomes) {
            held.remove(o.job().id());
        }
        onStored.accept(outcomes.size());
        for (int i = 0; i < outcomes.size(); i++) {
            events.stored(outcomes.get(i), applied[i]);
        }
    }
}
