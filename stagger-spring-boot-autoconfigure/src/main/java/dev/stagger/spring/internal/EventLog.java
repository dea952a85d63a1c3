package dev.stagger.spring.internal;

import dev.stagger.CircuitBreaker;
import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The recent events of each retry and breaker name, built from core's events only (a
 * {@link RetryListener} on each retry, a transition listener on each breaker): attempts, scheduled
 * retries, calls that gave up, calls refused by a budget, throttle or open breaker, and breaker
 * transitions. Each name keeps its last {@code size} events in a ring; reading returns them newest
 * first. An event names the exception's class only, never its message, which may carry payload.
 * Thread-safe; recording takes a short lock per name and never blocks under it.
 */
public final class EventLog {
    /** The event types, as the endpoint's {@code type} filter names them. */
    public static final List<String> TYPES = List.of("attempt", "retry", "give-up", "refusal", "transition");

    private final int size;
    private final Map<String, Ring> byName = new ConcurrentHashMap<>();
    private final AtomicLong sequence = new AtomicLong();

    /** Keeps the last {@code size} events of each name. */
    public EventLog(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be at least 1, got " + size);
        }
        this.size = size;
    }

    /** {@code retry} reporting its events here. */
    public Retry listen(Retry retry) {
        Clock clock = retry.clock();
        return retry.withListener(new RetryListener() {
            @Override
            public void onAttemptFinished(RetryEvent.AttemptFinished e) {
                Map<String, Object> m = details(e.failure());
                m.put("attempt", e.attempt());
                m.put("maxAttempts", e.maxAttempts());
                m.put("outcome", e.failed() ? "failure" : "success");
                m.put("duration", e.duration().toString());
                add(e.name(), "attempt", now(clock), m);
            }

            @Override
            public void onRetryScheduled(RetryEvent.RetryScheduled e) {
                Map<String, Object> m = details(e.cause());
                m.put("nextAttempt", e.nextAttempt());
                m.put("delay", e.delay().toString());
                add(e.name(), "retry", now(clock), m);
            }

            @Override
            public void onCallFinished(RetryEvent.CallFinished e) {
                if (e.reason().isSuccess()) {
                    return; // its attempts are recorded already
                }
                Map<String, Object> m = details(e.failure());
                m.put("reason", e.reason().name().toLowerCase(Locale.ROOT).replace('_', '-'));
                m.put("attempts", e.attempts());
                m.put("elapsed", e.elapsed().toString());
                add(e.name(), refusal(e.reason()) ? "refusal" : "give-up", now(clock), m);
            }
        });
    }

    /** Records {@code breaker}'s transitions from now on. */
    public void watch(CircuitBreaker breaker) {
        breaker.subscribe(t -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("from", t.from().name().toLowerCase(Locale.ROOT).replace('_', '-'));
            m.put("to", t.to().name().toLowerCase(Locale.ROOT).replace('_', '-'));
            add(t.circuitBreakerName(), "transition", t.at(), m);
        });
    }

    /**
     * The events kept, newest first: of every name, or of {@code name} only; of every type, or of
     * {@code type} only (one of {@link #TYPES}).
     */
    public List<Map<String, Object>> recent(@Nullable String name, @Nullable String type) {
        List<Event> events = new ArrayList<>();
        if (name != null) {
            Ring ring = byName.get(name);
            if (ring != null) {
                ring.copyInto(events);
            }
        } else {
            byName.values().forEach(r -> r.copyInto(events));
        }
        events.sort(Comparator.comparingLong(Event::sequence).reversed());
        List<Map<String, Object>> out = new ArrayList<>(events.size());
        for (Event e : events) {
            if (type == null || type.equals(e.type())) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("name", e.name());
                m.put("type", e.type());
                m.put("at", e.at().toString());
                m.putAll(e.details());
                out.add(m);
            }
        }
        return out;
    }

    private static boolean refusal(EndReason reason) {
        return reason == EndReason.BUDGET || reason == EndReason.THROTTLED || reason == EndReason.CIRCUIT_OPEN;
    }

    private static Instant now(Clock clock) {
        return Instant.ofEpochMilli(clock.currentTimeMillis());
    }

    private static Map<String, Object> details(@Nullable Throwable failure) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (failure != null) {
            m.put("failure", failure.getClass().getName());
        }
        return m;
    }

    private void add(String name, String type, Instant at, Map<String, Object> details) {
        byName.computeIfAbsent(name, n -> new Ring(size)).add(new Event(sequence.incrementAndGet(), name, type, at, details));
    }

    private record Event(long sequence, String name, String type, Instant at, Map<String, Object> details) {
    }

    /** The last events of one name, oldest overwritten first. */
    private static final class Ring {
        private final Event[] slots;
        private final ReentrantLock lock = new ReentrantLock();
        private int next;
        private int count;

        Ring(int size) {
            this.slots = new Event[size];
        }

        void add(Event e) {
            lock.lock();
            try {
                slots[next] = e;
                next = (next + 1) % slots.length;
                count = Math.min(count + 1, slots.length);
            } finally {
                lock.unlock();
            }
        }

        void copyInto(List<Event> out) {
            lock.lock();
            try {
                for (int i = 0; i < count; i++) {
                    out.add(slots[(next - 1 - i + slots.length) % slots.length]);
                }
            } finally {
                lock.unlock();
            }
        }
    }
}
