package dev.stagger.rabbitmq.internal;

import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.TreeSet;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Settles the deliveries of one consume channel, several with one frame where that is safe.
 *
 * <p>Any thread hands in an acknowledgement or a give-back (a reject with requeue) and returns at
 * once, unless no other thread is sending: then it sends what is waiting, and keeps sending while
 * more arrives, in the order handed in. What arrived while a frame was being written goes out
 * together: the acknowledgements of every delivery up to a tag below which nothing is left
 * unsettled go as one {@code basic.ack} with {@code multiple=true} on the highest of them; each
 * one above a delivery still unsettled (its handler still running, its copy not yet confirmed,
 * its give-back still waiting) goes alone, since a {@code multiple} acknowledgement would take
 * that delivery too. Nothing is held back to make a batch: when the sender has nothing more to
 * send, every acknowledgement handed in has been written.
 *
 * <p>Delivery tags are counted by the channel from 1 and each delivery is settled once (the
 * client library keeps counting up after an automatic recovery, and drops settlements of
 * deliveries from before it: the broker has taken those back). A tag that is never settled
 * only stops the batching above it.
 *
 * <p>Thread-safe.
 */
public final class Acknowledger {
    /** Where the settlements go: the consume channel, or a test's record. */
    public interface Frames {
        void ack(long tag, boolean multiple) throws IOException;

        void giveBack(long tag) throws IOException;
    }

    private final Frames frames;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition idle = lock.newCondition();
    /** Handed in, not yet taken by the sender: a tag to acknowledge, or minus a tag to give back. */
    private final ArrayDeque<Long> waiting = new ArrayDeque<>();
    private boolean sending;

    // the sender's own state: only the thread that set `sending` touches it
    /** Every delivery up to this tag is settled. */
    private long settledUpTo;
    /** Settled deliveries above {@link #settledUpTo}, each with its own frame already. */
    private final TreeSet<Long> settledAbove = new TreeSet<>();

    public Acknowledger(Frames frames) {
        this.frames = frames;
    }

    /** Settles deliveries on {@code channel}; a channel that has closed drops them (the broker takes the messages back). */
    public static Acknowledger on(Channel channel) {
        return new Acknowledger(new Frames() {
            @Override
            public void ack(long tag, boolean multiple) throws IOException {
                channel.basicAck(tag, multiple);
            }

            @Override
            public void giveBack(long tag) throws IOException {
                channel.basicReject(tag, true);
            }
        });
    }

    /** Acknowledges delivery {@code tag}. */
    public void ack(long tag) {
        hand(tag);
    }

    /** Returns delivery {@code tag} to the queue. */
    public void giveBack(long tag) {
        hand(-tag);
    }

    /**
     * Waits until everything handed in so far has been written, at most {@code timeoutNanos}.
     *
     * @return true when nothing is left to write
     */
    public boolean awaitWritten(long timeoutNanos) throws InterruptedException {
        long left = timeoutNanos;
        lock.lock();
        try {
            while (sending || !waiting.isEmpty()) {
                if (left <= 0) {
                    return false;
                }
                left = idle.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    private void hand(long op) {
        lock.lock();
        try {
            waiting.add(op);
            if (sending) {
                return; // the sender takes it with what else waits
            }
            sending = true;
        } finally {
            lock.unlock();
        }
        send();
    }

    private void send() {
        Long[] batch = new Long[0];
        boolean done = false;
        try {
            while (true) {
                lock.lock();
                try {
                    if (waiting.isEmpty()) {
                        sending = false;
                        idle.signalAll();
                        done = true;
                        return;
                    }
                    batch = waiting.toArray(batch);
                    int n = waiting.size();
                    waiting.clear();
                    if (batch.length > n) {
                        batch[n] = null;
                    }
                } finally {
                    lock.unlock();
                }
                settle(batch);
            }
        } finally {
            if (!done) {
                // an Error escaped: let the next caller send what is left
                lock.lock();
                try {
                    sending = false;
                    idle.signalAll();
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    /** Writes the frames for one batch (null-terminated when shorter than the array). */
    private void settle(Long[] batch) {
        TreeSet<Long> acks = new TreeSet<>();
        for (Long op : batch) {
            if (op == null) {
                break;
            }
            long tag = Math.abs(op);
            if (tag <= settledUpTo || settledAbove.contains(tag)) {
                continue; // settled before: a second frame for it would close the channel
            }
            if (op < 0) {
                // a give-back goes first and alone: no later multiple acknowledgement may take it
                write(tag, false, true);
                settledAbove.add(tag);
            } else {
                acks.add(tag);
            }
        }
        long highestAck = -1;
        while (true) {
            long next = settledUpTo + 1;
            if (acks.remove(next)) {
                highestAck = next;
            } else if (!settledAbove.remove(next)) {
                break;
            }
            settledUpTo = next;
        }
        if (highestAck > 0) {
            write(highestAck, true, false);
        }
        for (long tag : acks) {
            // above a delivery still unsettled: alone, now (nothing is held back for a batch)
            write(tag, false, false);
            settledAbove.add(tag);
        }
    }

    private void write(long tag, boolean multiple, boolean giveBack) {
        try {
            if (giveBack) {
                frames.giveBack(tag);
            } else {
                frames.ack(tag, multiple);
            }
        } catch (IOException | RuntimeException closed) {
            // the channel closed: the broker delivers the message again (at least once)
        }
    }
}
