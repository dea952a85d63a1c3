package dev.stagger.idempotency;

import dev.stagger.testing.VirtualClock;

class InMemoryIdempotencyStoreTest extends IdempotencyStoreContract {
    @Override
    IdempotencyStore newStore(VirtualClock clock) {
        return new InMemoryIdempotencyStore(clock);
    }
}
