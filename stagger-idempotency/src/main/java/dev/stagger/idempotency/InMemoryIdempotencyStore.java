package dev.stagger.idempotency;

import dev.stagger.Clock;
import dev.stagger.idempotency.internal.ClaimRules;
import dev.stagger.internal.Checks;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * A store in one JVM's memory, for tests and single-instance demos: records vanish on restart and
 * are not shared between servers. Atomicity comes from {@link ConcurrentHashMap#compute}.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {
    private final Clock clock;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    public InMemoryIdempotencyStore() {
        this(Clock.system());
    }

    public InMemoryIdempotencyStore(Clock clock) {
        if (clock == null) {
            throw new NullPointerException("clock must not be null");
        }
        this.clock = clock;
    }

    /** {@code token} while in flight, {@code response} once completed; null otherwise. */
    private record Entry(String fingerprint, boolean completed, @Nullable String token, long leaseUntil, long expiresAt,
                         @Nullable StoredResponse response) {
    }

    @Override
    public Claim claim(IdempotencyScope scope, RequestFingerprint fingerprint, Duration lease, Duration expiry) {
        long leaseMillis = Checks.millis("lease", lease);
        long expiryMillis = Checks.millis("expiry", expiry);
        Claim[] outcome = new Claim[1];
        entries.compute(scope.id(), (id, e) -> {
            long now = clock.currentTimeMillis();
            ClaimRules rule = e == null ? ClaimRules.REPLACE_EXPIRED : ClaimRules.decide(e.completed,
                    e.fingerprint, fingerprint.hex(), e.leaseUntil, e.expiresAt, now);
            switch (rule) {
                case MISMATCH:
                    outcome[0] = new Claim.Mismatch();
                    return e;
                case REPLAY:
                    outcome[0] = new Claim.Replay(Objects.requireNonNull(e.response, "response")); // completed: stored
                    return e;
                case IN_FLIGHT:
                    outcome[0] = new Claim.InFlight(Instant.ofEpochMilli(e.leaseUntil));
                    return e;
                default:
                    String token = UUID.randomUUID().toString();
                    outcome[0] = new Claim.Acquired(token, Instant.ofEpochMilli(now + leaseMillis),
                            rule == ClaimRules.TAKE_OVER);
                    return new Entry(fingerprint.hex(), false, token, now + leaseMillis, now + expiryMillis, null);
            }
        });
        return outcome[0];
    }

    @Override
    public boolean complete(IdempotencyScope scope, String leaseToken, StoredResponse response, Duration expiry) {
        long expiryMillis = Checks.millis("expiry", expiry);
        boolean[] done = new boolean[1];
        entries.computeIfPresent(scope.id(), (id, e) -> {
            if (e.completed || !leaseToken.equals(e.token)) {
                return e;
            }
            done[0] = true;
            return new Entry(e.fingerprint, true, null, e.leaseUntil, clock.currentTimeMillis() + expiryMillis,
                    response);
        });
        return done[0];
    }

    @Override
    public boolean release(IdempotencyScope scope, String leaseToken) {
        boolean[] done = new boolean[1];
        entries.computeIfPresent(scope.id(), (id, e) -> {
            if (e.completed || !leaseToken.equals(e.token)) {
                return e;
            }
            done[0] = true;
            return null;
        });
        return done[0];
    }

    @Override
    public Optional<IdempotencyRecord> find(IdempotencyScope scope) {
        String id = scope.id();
        Entry e = entries.get(id);
        if (e == null) {
            return Optional.empty();
        }
        return Optional.of(new IdempotencyRecord(id, RequestFingerprint.fromHex(e.fingerprint),
                e.completed ? IdempotencyRecord.State.COMPLETED : IdempotencyRecord.State.IN_FLIGHT,
                Instant.ofEpochMilli(e.leaseUntil), Instant.ofEpochMilli(e.expiresAt), Optional.ofNullable(e.response)));
    }

    @Override
    public int purgeExpired(int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1, got " + batchSize);
        }
        long now = clock.currentTimeMillis();
        int removed = 0;
        for (Iterator<Map.Entry<String, Entry>> it = entries.entrySet().iterator(); it.hasNext() && removed < batchSize;) {
            Map.Entry<String, Entry> e = it.next();
            if (e.getValue().expiresAt <= now && entries.remove(e.getKey(), e.getValue())) {
                removed++;
            }
        }
        return removed;
    }

    /** Number of records held, expired or not. */
    public int size() {
        return entries.size();
    }
}
