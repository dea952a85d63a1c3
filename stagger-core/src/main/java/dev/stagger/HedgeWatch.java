package dev.stagger;

import dev.stagger.internal.Checks;
import dev.stagger.internal.TimerWheel;
import java.util.concurrent.Callable;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The sync hedged call's fast path: the first attempt runs on the caller's thread and its hedge
 * timer is a deadline written into the thread's own reusable {@link Slot}, which one watcher
 * thread checks every millisecond. A call whose first attempt answers before the delay therefore
 * allocates nothing and makes no {@link HedgedExecution}: it reads the coarse clock, arms its slot
 * (one compare-and-set) and disarms it (another). Only when the watcher finds a slot past its
 * deadline does it make the call's execution around the running attempt and send the hedge
 * ({@link HedgedExecution#adopt}); the caller, finding its slot fired as its attempt returns,
 * hands its outcome to that execution and waits for the call's answer.
 *
 * <p>The same watcher arms the hedge of an async call whose first stage is pending
 * ({@link PendingHedge}): the call object itself is pushed onto a lock-free list, which the
 * watcher takes every tick, dropping the calls answered meanwhile and putting the others on a
 * {@link TimerWheel} only it touches; answering the call disarms it by a state change, with no
 * lock and no removal. An answered call's object is kept until the watcher's next pass (about a
 * millisecond) or, when it was still waiting then, until its delay would have passed.
 *
 * <p>Taken when the call needs nothing the execution does per attempt: no breaker, throttle,
 * listener, deadline, result predicate or attempt timeout, the system clock, no enclosing retry
 * or scope with a deadline or refusing nesting ({@link Retry#call}). While calls keep frames
 * ({@link Ambient}), the attempt runs in a frame of the thread's reusable stack, as a plain
 * retry's does: still nothing allocated. Costs: a slot per thread that ever made such a call (kept
 * while its thread calls, dropped by the watcher after about a second idle, made again on the
 * next call), a scan of the slots in use every millisecond, and a delay that fires up to a tick
 * (about 1 ms, more when the watcher is descheduled) late, as the system clock's timer does.
 */
final class HedgeWatch {
    /** The watcher's period: the coarse clock's tick. */
    static final long TICK_NANOS = 1_000_000L;
    /** Idle scans after which a slot is dropped from the watch (about a second). */
    static final int DROP_AFTER = 1_000;

    private static final ThreadLocal<Slot> SLOTS = ThreadLocal.withInitial(Slot::new);
    private static final HedgeWatch INSTANCE = new HedgeWatch();

    /** Slots pushed by their threads, taken by the watcher into its own list. */
    private final AtomicReference<Slot> incoming = new AtomicReference<>();
    /** The slots the watcher scans; only the watcher thread touches this list. */
    private @Nullable Slot watched;
    private volatile @Nullable Thread watcher;
    /** Async calls' hedge timers ({@link PendingHedge}) pushed by their callers, taken by the watcher. */
    private final AtomicReference<PendingHedge<?>> pending = new AtomicReference<>();
    /** The async timers still waiting after the pass that took them; only the watcher thread touches it. */
    private final TimerWheel wheel = new TimerWheel(System.nanoTime());
    /** Passes since the last async timer was pushed: the watcher keeps ticking for {@value #DROP_AFTER}. */
    private int asyncIdleScans = DROP_AFTER;
    /** Set while the watcher sleeps with nothing to watch: a push must then wake it. */
    private volatile boolean asleep;

    private HedgeWatch() {
    }

    /**
     * Runs a fast-path sync hedged call (see the class comment) on the caller's thread.
     *
     * @param serial {@link Ambient#serial()} as the call began
     */
    static <T> T call(Retry retry, Callable<T> operation, long serial) throws Exception {
        Slot slot = SLOTS.get();
        boolean framed = Ambient.framed(serial);
        if (framed && !frameless(slot.local.top(), retry)) {
            return new HedgedExecution<T>(retry, operation, false, true).await(); // it learns the bound or refuses
        }
        Hedging hedging = Checks.notNull("hedging", retry.hedging); // called only for a retry whose policy hedges
        long start = retry.clock.coarseNanoTime();
        if (!slot.arm(retry, operation, start, hedging.delayNanos())) {
            // a hedged call inside this thread's running one: the slot is taken, the general path runs it
            return new HedgedExecution<T>(retry, operation, false, true).await();
        }
        T result = null;
        Throwable failure = null;
        if (framed) {
            slot.local.enter(retry); // a retry inside the attempt sees this one around it, as on the general path
        }
        try {
            result = operation.call();
        } catch (Throwable t) {
            failure = t;
        } finally {
            if (framed) {
                slot.local.exit();
            }
        }
        @SuppressWarnings("unchecked")
        HedgedExecution<T> taken = (HedgedExecution<T>) slot.disarm();
        if (taken == null && failure == null) {
            if (hedging.timesAttempts()) {
                hedging.observed(retry.clock.coarseNanoTime() - start);
            }
            RetryBudget budget = retry.budget;
            if (budget != null) {
                budget.onSuccess();
            }
            return RetryExecution.asResult(result);
        }
        Ambient.Decided inner = failure == null ? null : slot.local.since(serial);
        HedgedExecution<T> rest = taken != null ? taken : new HedgedExecution<>(retry, operation, false, true);
        return rest.callerEnded(slot.local, start, result, failure, inner);
    }

    /**
     * Whether a call of {@code retry} started inside {@code around} (the thread's innermost frame,
     * null for none) needs nothing from it: no deadline on the retry's clock to bound its attempts
     * by, no refused nesting. Such a call's frame then only marks it for the retries inside it.
     */
    private static boolean frameless(Ambient.@Nullable Frame around, Retry retry) {
        return around == null || around.nesting() != Nesting.REFUSE && around.deadlineOn(retry.clock) == Ambient.NO_DEADLINE;
    }

    /**
     * Arms an async call's hedge timer, due at {@code call.due}: a push onto a lock-free list
     * (the call is the entry: nothing allocated), no lock and no wake-up while the watcher ticks.
     * Disarming is the call's own state change; the watcher drops an entry no longer
     * {@link PendingHedge#waiting() waiting} at its next pass (about a millisecond) or, once it has
     * put it on its wheel, when it comes due.
     */
    static void watch(PendingHedge<?> call) {
        INSTANCE.push(call);
    }

    private void push(PendingHedge<?> call) {
        PendingHedge<?> head;
        do {
            head = pending.get();
            call.nextIncoming = head;
        } while (!pending.compareAndSet(head, call));
        Thread w = watcher;
        if (w == null) {
            w = startWatcher();
            LockSupport.unpark(w);
        } else if (asleep) {
            LockSupport.unpark(w);
        }
    }

    /** Puts {@code slot} under watch again and wakes the watcher (started on first use). */
    private void watch(Slot slot) {
        Slot head;
        do {
            head = incoming.get();
            slot.nextIncoming = head;
        } while (!incoming.compareAndSet(head, slot));
        Thread w = watcher;
        if (w == null) {
            w = startWatcher();
        }
        LockSupport.unpark(w);
    }

    private synchronized Thread startWatcher() { // once per process; no blocking inside
        Thread w = watcher;
        if (w == null) {
            w = new Thread(this::loop, "stagger-hedge-watch");
            w.setDaemon(true);
            watcher = w;
            w.start();
        }
        return w;
    }

    private void loop() {
        while (true) {
            try {
                if (!scan(System.nanoTime())) {
                    asleep = true; // then look again: a push that missed it was seen here
                    if (incoming.get() == null && pending.get() == null) {
                        LockSupport.park(this);
                    }
                    asleep = false;
                } else {
                    LockSupport.parkNanos(this, TICK_NANOS);
                }
            } catch (Throwable t) {
                // a failed hand-over must not stop the watch of every other thread
            }
        }
    }

    /**
     * One pass over the watched slots at {@code now}: fires those past their deadline, drops those
     * idle for {@value #DROP_AFTER} passes. Only the watcher thread (or a test standing in for it).
     *
     * @return whether anything is still watched (the watcher then ticks, else it sleeps until woken)
     */
    boolean scan(long now) {
        for (Slot s = incoming.getAndSet(null); s != null; ) {
            Slot following = s.nextIncoming;
            s.nextIncoming = null;
            s.idleScans = 0;
            s.nextWatched = watched;
            watched = s;
            s = following;
        }
        Slot previous = null;
        for (Slot s = watched; s != null; ) {
            Slot following = s.nextWatched;
            if (s.check(now)) {
                previous = s;
            } else {
                s.nextWatched = null; // dropped: its thread puts it back when it next calls
                if (previous == null) {
                    watched = following;
                } else {
                    previous.nextWatched = following;
                }
            }
            s = following;
        }
        return scanPending(now) || watched != null;
    }

    /**
     * Takes the async timers pushed since the last pass (dropping those no longer waiting), fires
     * those due by {@code now}, and tells whether any is still waiting or one was pushed within the
     * last {@value #DROP_AFTER} passes (the watcher keeps ticking then, so pushes need not wake it).
     */
    private boolean scanPending(long now) {
        PendingHedge<?> taken = pending.getAndSet(null);
        if (taken != null) {
            asyncIdleScans = 0;
        } else if (asyncIdleScans < DROP_AFTER) {
            asyncIdleScans++;
        }
        for (PendingHedge<?> p = taken; p != null; ) {
            PendingHedge<?> following = p.nextIncoming;
            p.nextIncoming = null;
            if (p.waiting()) {
                wheel.add(p, now, p.due - now);
            }
            p = following;
        }
        for (TimerWheel.Node n = wheel.expire(now); n != null; ) {
            TimerWheel.Node following = n.nextExpired();
            try {
                ((PendingHedge<?>) n).fire();
            } catch (RuntimeException refused) {
                // the common pool refused the hand-over: that call goes on without its hedge, the others fire
            }
            n = following;
        }
        return wheel.size() > 0 || asyncIdleScans < DROP_AFTER;
    }

    /**
     * One thread's hedge timer: {@code (serial << 3) | phase} in one atomic word, the serial counting
     * armings so the watcher never fires an arming by an older one's deadline.
     */
    static final class Slot {
        static final long OFF = 0;
        static final long IDLE = 1;
        static final long ARMED = 2;
        static final long FIRED = 3;
        static final long HANDED = 4;
        private static final long PHASE = 7;

        private final AtomicLong word = new AtomicLong();

        /** The thread whose calls use this slot. */
        final Thread owner = Thread.currentThread();
        /** The owner's stack of running retries, read when a call's execution is made for it. */
        final Ambient.Local local = Ambient.local();
        /** The armed call; written by the owner before arming, read by the watcher after firing. */
        private @Nullable Retry retry;
        private @Nullable Callable<?> operation;
        private long start;
        /** When the armed call's hedge is due; read by the watcher while the owner may re-arm (opaque: never torn). */
        private final AtomicLong due = new AtomicLong();
        /** The execution the watcher made for the fired call, published by the HANDED phase. */
        private @Nullable HedgedExecution<?> handed;
        private @Nullable Slot nextIncoming;
        private @Nullable Slot nextWatched;
        private int idleScans;

        /** Arms the slot for a call begun at {@code start}; false when it is armed already (a call inside a call). */
        boolean arm(Retry retry, Callable<?> operation, long start, long delay) {
            long w = word.get();
            long phase = w & PHASE;
            if (phase != IDLE && phase != OFF) {
                return false;
            }
            this.retry = retry;
            this.operation = operation;
            this.start = start;
            due.setOpaque(start + delay);
            long next = (w & ~PHASE) + 8;
            if (phase == IDLE && word.compareAndSet(w, next | ARMED)) {
                return true;
            }
            // OFF (now or since the watcher dropped it): no other thread reads it until it is watched again
            word.set(next | ARMED);
            INSTANCE.watch(this);
            return true;
        }

        /**
         * Disarms the slot as the owner's attempt returns.
         *
         * @return null when no hedge was due; else the execution the watcher made for the call
         */
        @Nullable HedgedExecution<?> disarm() {
            long w = word.get();
            if ((w & PHASE) == ARMED && word.compareAndSet(w, (w & ~PHASE) | IDLE)) {
                retry = null;
                operation = null;
                return null;
            }
            for (int spins = 0; ((w = word.get()) & PHASE) != HANDED; spins++) {
                if (spins < 1_000) {
                    Thread.onSpinWait(); // the hand-over is making the execution: a few microseconds
                } else {
                    Thread.yield(); // its thread is waiting for a core
                }
            }
            HedgedExecution<?> e = handed;
            handed = null;
            retry = null;
            operation = null;
            word.set((w & ~PHASE) | IDLE);
            return e;
        }

        /** The watcher's look at this slot; false when it drops it. */
        boolean check(long now) {
            long w = word.get();
            long phase = w & PHASE;
            if (phase == ARMED) {
                idleScans = 0;
                if (now - due.getOpaque() >= 0 && word.compareAndSet(w, (w & ~PHASE) | FIRED)) {
                    ForkJoinPool.commonPool().execute(this::handOver);
                }
                return true;
            }
            if (phase == IDLE && ++idleScans > DROP_AFTER) {
                return !word.compareAndSet(w, w & ~PHASE); // OFF: the owner re-registers on its next call
            }
            return phase != OFF;
        }

        /**
         * Off the watcher's thread (the hedge's executor might run it inline): makes the execution
         * around the owner's running attempt and sends the hedge. The owner waits for HANDED.
         */
        private void handOver() {
            @Nullable HedgedExecution<?> e;
            try {
                // armed: the owner set both before the ARMED phase this FIRED one follows
                e = new HedgedExecution<>(Checks.notNull("retry", retry), Checks.notNull("operation", operation), false, true);
                e.adopt(local, owner, start);
            } catch (RuntimeException | Error failed) {
                e = null; // no hedge: the owner ends the call with its own attempt, as if none was due
            }
            handed = e;
            word.set((word.get() & ~PHASE) | HANDED);
        }
    }

}
