package dev.stagger;

import dev.stagger.internal.Checks;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * How Stagger retries learn about each other on a thread, paid for only where it is needed.
 *
 * <p><b>Decisions</b> travel without any bookkeeping on the success path. A retry that ends
 * without success (gave up, judged a failure not retryable, was refused) records a {@link Decided}
 * on its thread's {@link Decisions} (an async one on the {@link Sink} of the thread it was
 * started on), stamped with a process-wide serial number. A retry whose attempt fails reads that record
 * and takes it as the decision of a retry that ran inside the attempt when its serial is newer
 * than the one read as the attempt began (one volatile read) and when it covers the failure (see
 * {@link Decided#covers}). A record older than the attempt belongs to some earlier call on the
 * thread and is ignored.
 *
 * <p><b>Frames</b> carry what an inner retry must know as it starts: the deadline of the retries
 * and {@link RetryScope scopes} around it, and whether either refuses nesting. They cost a
 * thread-local lookup and a few stores per call, so they are kept only once something in the
 * process needs them: the first call of a retry with a deadline, the first retry made with
 * {@link Nesting#REFUSE}, the first scope opened ({@link #needFrames()}). From then on every sync
 * call keeps a frame while it runs, and an async one while its operation is being invoked. Frames
 * are reused per depth, so entering allocates nothing once a thread has reached that depth.
 */
final class Ambient {
    private static final ThreadLocal<Local> LOCAL = ThreadLocal.withInitial(Local::new);
    /**
     * The serial number of the latest decision, counted in steps of 2, and in bit 0 whether calls
     * keep frames (set once, never cleared): one volatile read tells a call both.
     */
    private static final AtomicLong STATE = new AtomicLong();
    private static final long FRAMED = 1;
    static final long NO_DEADLINE = Long.MAX_VALUE;

    private Ambient() {
    }

    static Local local() {
        return LOCAL.get();
    }

    /**
     * The serial number of the latest decision in the process, read as an attempt begins; its bit
     * 0 is {@link #framed(long)}. A decision made later has a greater serial.
     */
    static long serial() {
        return STATE.get();
    }

    /** Whether calls keep frames, from a value {@link #serial()} returned. */
    static boolean framed(long serial) {
        return (serial & FRAMED) != 0;
    }

    /** Whether calls keep frames. */
    static boolean framed() {
        return framed(STATE.get());
    }

    /** For tests of both modes: whether calls keep frames from now on. */
    static void framed(boolean keep) {
        long v;
        do {
            v = STATE.get();
        } while (!STATE.compareAndSet(v, keep ? v | FRAMED : v & ~FRAMED));
    }

    /** From now on every call keeps a frame (a deadline, a refusal or a scope needs them). */
    static void needFrames() {
        if (!framed()) {
            framed(true);
        }
    }

    /** Whom a retry that ended without success tells: the thread it ran on, or an async call around it. */
    interface Sink {
        void told(Decided decided);
    }

    /** What a retry tells when it ended without success. */
    static final class Decided {
        final String inner;
        final int attempts;
        final EndReason reason;
        /** What the call threw, or null when it returned a result it had not accepted. */
        final @Nullable Throwable failure;
        /** Newer than the serial an attempt read as it began when the decision was made during it. */
        final long serial;

        Decided(String inner, int attempts, EndReason reason, @Nullable Throwable failure) {
            this.inner = inner;
            this.attempts = attempts;
            this.reason = reason;
            this.failure = failure;
            this.serial = STATE.addAndGet(2); // bit 0, the frames flag, is left as it is
        }

        /**
         * Whether {@code thrown} is what this decision was about: the inner's failure itself or an
         * exception caused by it; any failure when the inner ended on a result (a response such as a
         * 404 or a last 503, which the code around it may turn into an exception of its own).
         */
        boolean covers(Throwable thrown) {
            if (failure == null) {
                return true;
            }
            Throwable t = thrown;
            for (int i = 0; t != null && i < 32; i++, t = t.getCause()) {
                if (t == failure) {
                    return true;
                }
            }
            return false;
        }
    }

    /** One running retry, or an open scope, on the thread. */
    static final class Frame {
        /** The retry; null for a {@link RetryScope}. */
        @Nullable Retry retry;
        /** A scope's clock; null for a retry's frame (the retry's clock). */
        @Nullable Clock scopeClock;
        /** The earliest deadline of this call and those around it, on {@link #clock()}; NO_DEADLINE for none. */
        long deadlineAt;

        Clock clock() {
            Retry r = retry;
            return r == null ? Checks.notNull("scopeClock", scopeClock) : r.clock; // a scope's frame has its clock
        }

        Nesting nesting() {
            Retry r = retry;
            return r == null ? Nesting.DEFER : r.nesting;
        }

        String name() {
            Retry r = retry;
            return r == null ? "scope" : r.name;
        }

        /** Shortens the frame's deadline to {@code at} if that is earlier. */
        void limit(long at) {
            if (at < deadlineAt) {
                deadlineAt = at;
            }
        }

        /** The deadline as seen on {@code clock}: NO_DEADLINE when there is none or it runs on another clock. */
        long deadlineOn(Clock clock) {
            return clock() == clock ? deadlineAt : NO_DEADLINE;
        }
    }

    /** The latest decision told to a thread: written by async calls from other threads too. */
    static final class Decisions implements Sink {
        private volatile @Nullable Decided latest;

        @Override
        public void told(Decided d) {
            latest = d;
        }

        /**
         * The latest decision made since {@code serial} was read, or null. Compared as the low 32
         * bits, wrap-safe: an execution keeps its serial in an int (four bytes less per pending
         * async call), and no attempt sees 2^30 decisions pass.
         */
        @Nullable Decided since(long serial) {
            Decided d = latest;
            return d != null && (int) d.serial - (int) serial > 0 ? d : null;
        }
    }

    /**
     * Whom a call inside another tells, with the deadline of what it runs inside: allocated only
     * for a call that has such a deadline, so a call's object holds one reference for both.
     */
    static final class Outer implements Sink {
        /** Whom to tell; null for a sync call (its thread). */
        final @Nullable Sink to;
        final long deadlineAt;

        Outer(@Nullable Sink to, long deadlineAt) {
            this.to = to;
            this.deadlineAt = deadlineAt;
        }

        @Override
        public void told(Decided d) {
            (to != null ? to : local().decisions).told(d);
        }
    }

    /** A thread's frames and latest decision; used by its own thread only (decisions excepted). */
    static final class Local {
        final Decisions decisions = new Decisions();
        /** The async call whose operation is being invoked on this thread, or null. */
        @Nullable AsyncRetryExecution<?> starting;
        private Frame[] frames = new Frame[4];
        private int depth;

        /** The latest decision made since {@code serial} was read, or null. */
        @Nullable Decided since(long serial) {
            return decisions.since(serial);
        }

        /** Whom an async call started on this thread now tells when it ends. */
        Sink sink() {
            AsyncRetryExecution<?> s = starting;
            return s != null ? s : decisions;
        }

        /** The innermost frame, or null. */
        @Nullable Frame top() {
            return depth == 0 ? null : frames[depth - 1];
        }

        /**
         * Puts {@code retry} on the stack; refuses with a {@link RetryNestingException} when it or
         * the retry around it refuses nesting.
         */
        Frame enter(Retry retry) {
            int d = depth;
            long deadlineAt = NO_DEADLINE;
            if (d > 0) {
                Frame below = frames[d - 1];
                if (below.nesting() == Nesting.REFUSE || retry.nesting == Nesting.REFUSE) {
                    throw refuse(retry, below);
                }
                deadlineAt = below.deadlineOn(retry.clock);
            }
            return push(d, retry, null, deadlineAt);
        }

        /** Puts a scope measured on {@code clock} on the stack. */
        Frame enterScope(Clock clock) {
            int d = depth;
            return push(d, null, clock, d > 0 ? frames[d - 1].deadlineOn(clock) : NO_DEADLINE);
        }

        private Frame push(int d, @Nullable Retry retry, @Nullable Clock scopeClock, long deadlineAt) {
            if (d == frames.length) {
                frames = Arrays.copyOf(frames, d * 2);
            }
            Frame f = frames[d];
            if (f == null) {
                frames[d] = f = new Frame();
            }
            if (f.retry != retry) { // a frame is reused at its depth: a reference store costs a GC barrier
                f.retry = retry;
            }
            if (f.scopeClock != scopeClock) {
                f.scopeClock = scopeClock;
            }
            f.deadlineAt = deadlineAt;
            depth = d + 1;
            return f;
        }

        void exit() {
            depth--;
        }

        /** Removes {@code frame} and any frame left above it (a scope closed while calls inside it never ended). */
        void exit(Frame frame) {
            for (int i = depth - 1; i >= 0; i--) {
                if (frames[i] == frame) {
                    depth = i;
                    return;
                }
            }
        }

        /** The refusal of {@code inner} inside {@code outer}, told on this thread as decided. */
        RetryNestingException refuse(Retry inner, Frame outer) {
            String refusing = inner.nesting == Nesting.REFUSE ? inner.name : outer.name();
            RetryNestingException e = new RetryNestingException(inner.name, outer.name(), refusing);
            decisions.told(new Decided(inner.name, 0, EndReason.NOT_RETRYABLE, e));
            return e;
        }
    }
}
