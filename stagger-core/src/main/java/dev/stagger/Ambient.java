package dev.stagger;

/**
 * The Stagger retries running on this thread, innermost last: how a retry learns that it runs
 * inside another (for the one-layer rule and the outer's deadline) and how it tells the enclosing
 * one that it decided on a failure. A sync call is on the stack while it runs; an async call
 * while its operation is being invoked (an async call started by that operation keeps a reference
 * to the call it was started in). Frames are reused per depth, so entering allocates nothing once
 * a thread has reached that depth.
 */
final class Ambient {
    private static final ThreadLocal<Stack> STACK = ThreadLocal.withInitial(Stack::new);
    static final long NO_DEADLINE = Long.MAX_VALUE;

    private Ambient() {
    }

    static Stack stack() {
        return STACK.get();
    }

    /** What an inner retry tells the retry it ran in when it ended without success. */
    static final class Decided {
        final String inner;
        final int attempts;
        final EndReason reason;
        /** What the inner call threw, or null when it returned a result it had not accepted. */
        final Throwable failure;

        Decided(String inner, int attempts, EndReason reason, Throwable failure) {
            this.inner = inner;
            this.attempts = attempts;
            this.reason = reason;
            this.failure = failure;
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

    /** One running retry on the thread. */
    static final class Frame {
        Retry retry;
        /** The enclosing frame, or null at the outside. */
        Frame below;
        /** The earliest deadline of this call and those around it, on {@code retry.clock}; NO_DEADLINE for none. */
        long deadlineAt;
        /** Tells a reused frame from the call an async inner retry was started in. */
        long serial;
        /** An async call's execution, told directly (its attempts outlive the frame); null for a sync call. */
        AsyncRetryExecution<?> sink;
        /** The last inner call's decision in the current attempt of a sync call. */
        Decided decided;

        void record(Decided d) {
            AsyncRetryExecution<?> s = sink;
            if (s != null) {
                s.innerDecided = d;
            } else {
                decided = d;
            }
        }

        /** Shortens the frame's deadline to {@code at} if that is earlier. */
        void limit(long at) {
            if (at < deadlineAt) {
                deadlineAt = at;
            }
        }
    }

    static final class Stack {
        private Frame[] frames = new Frame[4];
        private int depth;
        private long serials;

        /** The innermost running retry, or null. */
        Frame top() {
            return depth == 0 ? null : frames[depth - 1];
        }

        /**
         * Puts {@code retry} on the stack; refuses with a {@link RetryNestingException} (told to
         * the enclosing retry) when either refuses nesting.
         */
        Frame enter(Retry retry, AsyncRetryExecution<?> sink) {
            int d = depth;
            Frame below = null;
            long deadlineAt = NO_DEADLINE;
            if (d > 0) {
                below = frames[d - 1];
                if (below.retry.nesting == Nesting.REFUSE || retry.nesting == Nesting.REFUSE) {
                    throw refuse(retry, below);
                }
                below.record(null); // its latest inner call is this one
                if (below.retry.clock == retry.clock) {
                    deadlineAt = below.deadlineAt;
                }
            }
            if (d == frames.length) {
                frames = java.util.Arrays.copyOf(frames, d * 2);
            }
            Frame f = frames[d];
            if (f == null) {
                frames[d] = f = new Frame();
            }
            // a frame is reused by every call at its depth: write only what changed (reference
            // stores cost a GC barrier); fields above the stack's depth are never read
            if (f.retry != retry) {
                f.retry = retry;
            }
            if (f.below != below) {
                f.below = below;
            }
            if (f.sink != sink) {
                f.sink = sink;
            }
            f.deadlineAt = deadlineAt;
            f.serial = ++serials;
            if (f.decided != null) {
                f.decided = null;
            }
            depth = d + 1;
            return f;
        }

        void exit() {
            Frame f = frames[--depth];
            if (f.sink != null) {
                f.sink = null; // an async call's execution is not kept past its attempt
            }
            if (f.decided != null) {
                f.decided = null;
            }
        }
    }

    /** The refusal of {@code inner} inside {@code outer}, told to {@code outer} as decided. */
    static RetryNestingException refuse(Retry inner, Frame outer) {
        String refusing = inner.nesting == Nesting.REFUSE ? inner.name : outer.retry.name;
        RetryNestingException e = new RetryNestingException(inner.name, outer.retry.name, refusing);
        outer.record(new Decided(inner.name, 0, EndReason.NOT_RETRYABLE, e));
        return e;
    }
}
