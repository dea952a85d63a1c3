package dev.stagger.spring.internal;

import dev.stagger.CircuitBreaker;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the actuator endpoint shows beyond the components' own state: calls by end reason per
 * retry name, and the last transitions of each breaker. Counting is a {@link LongAdder} increment;
 * the transition history keeps the last {@value #KEEP} per breaker.
 */
public final class InstanceEvents {
    static final int KEEP = 20;
    private static final EndReason[] REASONS = EndReason.values();

    private final Map<String, LongAdder[]> ends = new ConcurrentHashMap<>();
    private final Map<String, Deque<Map<String, Object>>> transitions = new ConcurrentHashMap<>();
    private final ReentrantLock lock = new ReentrantLock();

    /** A listener counting the ends of retry {@code name}'s calls. */
    public Retry count(Retry retry) {
        LongAdder[] counts = ends.computeIfAbsent(retry.name(), n -> {
            LongAdder[] a = new LongAdder[REASONS.length];
            for (int i = 0; i < a.length; i++) {
                a[i] = new LongAdder();
            }
            return a;
        });
        return retry.withListener(new RetryListener() {
            @Override
            public void onCallFinished(RetryEvent.CallFinished event) {
                counts[event.reason().ordinal()].increment();
            }
        });
    }

    /** Records {@code breaker}'s transitions from now on. */
    public void watch(CircuitBreaker breaker) {
        Deque<Map<String, Object>> history = transitions.computeIfAbsent(breaker.name(), n -> new ArrayDeque<>());
        breaker.subscribe(t -> {
            lock.lock();
            try {
                if (history.size() == KEEP) {
                    history.removeFirst();
                }
                history.addLast(Map.of("from", t.from().name(), "to", t.to().name(), "at", Instant.now().toString()));
            } finally {
                lock.unlock();
            }
        });
    }

    public Map<String, Long> ends(String retry) {
        LongAdder[] counts = ends.get(retry);
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        if (counts != null) {
            for (EndReason r : REASONS) {
                long n = counts[r.ordinal()].sum();
                if (n > 0) {
                    out.put(r.name().toLowerCase(java.util.Locale.ROOT), n);
                }
            }
        }
        return out;
    }

    public List<Map<String, Object>> transitions(String breaker) {
        Deque<Map<String, Object>> history = transitions.get(breaker);
        if (history == null) {
            return List.of();
        }
        lock.lock();
        try {
            return new ArrayList<>(history);
        } finally {
            lock.unlock();
        }
    }

}
