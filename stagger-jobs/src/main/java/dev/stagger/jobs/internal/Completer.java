package dev.stagger.jobs.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.IntConsumer;

/**
 * The pool's completer thread: stores the outcomes handlers produce, in batches (one transaction
 * for whatever has accumulated, so one commit covers many jobs), and reports each once stored. A
 * batch that fails is kept and stored again after reconnecting. Runs on one thread, in a
 * {@link ReconnectingLoop}, until {@link #finish()} and everything before it is stored.
 */
public final class Completer implements ReconnectingLoop.Step {
    private static final int MAX_BATCH = 1000;
    /** Marks the end: nothing follows it. */
    private static final Outcome END = new Outcome(Outcome.Kind.RELEASE, null, 0, null, 0, false, 0, null);

    private final JobStore store;
    private final PoolEvents events;
    private final IntConsumer onStored;
    private final BlockingQueue<Outcome> queue = new LinkedBlockingQueue<>();
    private final List<Outcome> batch = new ArrayList<>();
    private final Statements statements = new Statements();
    private boolean endSeen;
    private volatile boolean finished;

    /** @param onStored told how many outcomes each stored batch held */
    public Completer(JobStore store, PoolEvents events, IntConsumer onStored) {
        this.store = store;
        this.events = events;
        this.onStored = onStored;
    }

    /** Queues an outcome to store. */
    public void add(Outcome o) {
        queue.add(o);
    }

    /** No outcome follows: store what is queued, then stop. */
    public void finish() {
        queue.add(END);
    }

    public boolean finished() {
        return finished;
    }

    @Override
    public void run(Connection c) throws SQLException, InterruptedException {
        if (batch.isEmpty()) {
            Outcome first = queue.take();
            if (first != END) {
                batch.add(first);
            }
            List<Outcome> more = new ArrayList<>();
            queue.drainTo(more, MAX_BATCH - 1);
            for (Outcome o : more) {
                if (o == END) {
                    endSeen = true;
                } else {
                    batch.add(o);
                }
            }
            endSeen |= first == END;
        }
        if (!batch.isEmpty()) {
            boolean[] applied = store.apply(statements, c, batch);
            onStored.accept(batch.size());
            for (int i = 0; i < batch.size(); i++) {
                events.stored(batch.get(i), applied[i]);
            }
            batch.clear();
        }
        if (endSeen) {
            finished = true;
        }
    }
}
