package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.idempotency.Claim;
import dev.stagger.idempotency.IdempotencyCompletion;
import dev.stagger.idempotency.IdempotencyKey;
import dev.stagger.idempotency.IdempotencyOutcome;
import dev.stagger.idempotency.IdempotencyScope;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.RequestFingerprint;
import dev.stagger.idempotency.StoredResponse;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testing.VirtualClock;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdempotencyMetricsTest {
    @TempDir
    Path dir;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private double requests(String outcome) {
        return registry.get(IdempotencyMetrics.REQUESTS).tag("outcome", outcome).counter().count();
    }

    private double completions(String result) {
        return registry.get(IdempotencyMetrics.COMPLETIONS).tag("result", result).counter().count();
    }

    @Test
    void everyOutcomeAndResultHasItsSeriesAtZeroFromTheStart() {
        IdempotencyMetrics.of(registry);

        assertThat(registry.get(IdempotencyMetrics.REQUESTS).counters()).hasSize(IdempotencyOutcome.values().length)
                .allSatisfy(c -> assertThat(c.count()).isZero());
        assertThat(registry.get(IdempotencyMetrics.COMPLETIONS).counters()).hasSize(IdempotencyCompletion.values().length);
        assertThat(requests("took_over")).isZero();
        assertThat(completions("lease_lost")).isZero();
        assertThat(registry.get(IdempotencyMetrics.PURGED).counter().count()).isZero();
    }

    @Test
    void countsDecisionsByOutcomeAndResponsesByResult() {
        IdempotencyMetrics metrics = IdempotencyMetrics.of(registry);

        metrics.decided(IdempotencyOutcome.EXECUTED, "POST", "/orders");
        metrics.completed(IdempotencyCompletion.STORED, "POST", "/orders", 201);
        metrics.decided(IdempotencyOutcome.REPLAYED, "POST", "/orders");
        metrics.decided(IdempotencyOutcome.REPLAYED, "POST", "/orders");
        metrics.decided(IdempotencyOutcome.IN_FLIGHT, "POST", "/orders");
        metrics.decided(IdempotencyOutcome.KEY_REUSED, "POST", "/orders");
        metrics.decided(IdempotencyOutcome.TOOK_OVER, "POST", "/orders");
        metrics.completed(IdempotencyCompletion.LEASE_LOST, "POST", "/orders", 201);

        assertThat(requests("executed")).isEqualTo(1);
        assertThat(requests("replayed")).isEqualTo(2);
        assertThat(requests("in_flight")).isEqualTo(1);
        assertThat(requests("key_reused")).isEqualTo(1);
        assertThat(requests("took_over")).isEqualTo(1);
        assertThat(completions("stored")).isEqualTo(1);
        assertThat(completions("lease_lost")).isEqualTo(1);
    }

    @Test
    void countsTheRecordsAScheduledPurgeRemovesAndItsFailures() {
        VirtualClock clock = new VirtualClock();
        IdempotencyMetrics metrics = IdempotencyMetrics.of(registry);
        try (JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("k.db")))
                .clock(clock).purgeInterval(Duration.ofMinutes(5)).idempotencyListener(metrics).build()) {
            for (String key : new String[] {"a", "b", "c"}) {
                IdempotencyScope scope = new IdempotencyScope("alice", "POST", "/orders", IdempotencyKey.of(key));
                Claim.Acquired claim = (Claim.Acquired) store.claim(scope,
                        RequestFingerprint.of("POST", "/orders", null, Map.of(), new byte[0]),
                        Duration.ofSeconds(60), Duration.ofMinutes(30));
                store.complete(scope, claim.leaseToken(), StoredResponse.of(201, Map.of(), new byte[0]),
                        Duration.ofMinutes(30));
            }

            clock.advance(Duration.ofMinutes(35));

            assertThat(registry.get(IdempotencyMetrics.PURGED).counter().count()).isEqualTo(3);
        }
        metrics.purgeFailed(new IllegalStateException("database gone"));
        assertThat(registry.get(IdempotencyMetrics.PURGE_FAILURES).counter().count()).isEqualTo(1);
    }

    @Test
    void commonTagsAreAddedToEverySeries() {
        IdempotencyMetrics.of(registry).withTags(Tags.of("api", "payments"))
                .decided(IdempotencyOutcome.REPLAYED, "POST", "/charges");

        assertThat(registry.get(IdempotencyMetrics.REQUESTS).tags("api", "payments", "outcome", "replayed").counter()
                .count()).isEqualTo(1);
        assertThatThrownBy(() -> IdempotencyMetrics.of(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("registry");
    }
}
