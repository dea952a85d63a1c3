package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * What an integration needs to adapt a hedged policy: {@link HedgePolicy#toBuilder()},
 * {@link RetryPolicy.Builder#withoutHedge()}, and {@link Retry#withPolicy} keeping the recent
 * latencies of the same hedge.
 */
class HedgePolicyCopyTest {
    private final VirtualClock clock = new VirtualClock();

    private static HedgePolicy percentile() {
        return HedgePolicy.builder().delay(Duration.ofMillis(50)).percentile(95).floor(Duration.ofMillis(2))
                .warmup(1).window(Duration.ofSeconds(10)).maxHedges(2).build();
    }

    @Test
    void toBuilderCopiesEverySetting() {
        List<Object> discarded = new CopyOnWriteArrayList<>();
        Consumer<Object> hook = discarded::add;
        HedgePolicy original = HedgePolicy.builder().delay(Duration.ofMillis(50)).percentile(90).floor(Duration.ofMillis(3))
                .warmup(7).window(Duration.ofSeconds(12)).maxHedges(3).maxSlowShare(0.3).onDiscard(hook).build();
        HedgePolicy copy = original.toBuilder().build();
        assertThat(copy).isNotSameAs(original).hasToString(original.toString());
        assertThat(copy.delay()).isEqualTo(Duration.ofMillis(50));
        assertThat(copy.percentile()).hasValue(90.0);
        assertThat(copy.floor()).isEqualTo(Duration.ofMillis(3));
        assertThat(copy.warmup()).isEqualTo(7);
        assertThat(copy.window()).isEqualTo(Duration.ofSeconds(12));
        assertThat(copy.maxHedges()).isEqualTo(3);
        assertThat(copy.maxSlowShare()).hasValue(0.3);
        assertThat(copy.onDiscard()).containsSame(hook);
        assertThat(HedgePolicy.after(Duration.ofMillis(5)).onDiscard()).isEmpty();
    }

    @Test
    void withoutHedgeMakesAPolicyThatDoesNotHedge() {
        RetryPolicy hedged = RetryPolicy.builder().maxAttempts(3).hedge(percentile()).build();
        RetryPolicy plain = hedged.toBuilder().withoutHedge().build();
        assertThat(plain.hedge()).isEmpty();
        assertThat(plain.maxAttempts()).isEqualTo(3);
        assertThat(Retry.of("plain", plain).hedgeDelay()).isEmpty();
    }

    @Test
    void withPolicyKeepsTheLatenciesOfTheSameHedgeOnly() throws Exception {
        HedgePolicy hedge = percentile();
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).hedge(hedge).build();
        Retry retry = Retry.of("catalog", policy).withClock(clock).withoutBudget();
        assertThat(retry.hedgeDelay()).contains(Duration.ofMillis(50)); // warming up: the fixed delay

        assertThat(retry.callAsync(() -> CompletableFuture.completedFuture("ok")).get()).isEqualTo("ok");
        assertThat(retry.hedgeDelay()).contains(Duration.ofMillis(2)); // one latency of 0: the floor

        Retry sameHedge = retry.withPolicy(policy.toBuilder().classifier((result, failure, context) -> Decision.accept()).build());
        assertThat(sameHedge.hedgeDelay()).contains(Duration.ofMillis(2));
        Retry otherHedge = retry.withPolicy(policy.toBuilder().hedge(hedge.toBuilder().build()).build());
        assertThat(otherHedge.hedgeDelay()).contains(Duration.ofMillis(50));
        Retry noHedge = retry.withPolicy(policy.toBuilder().withoutHedge().build());
        assertThat(noHedge.hedgeDelay()).isEmpty();
        assertThat(noHedge.budget()).isEmpty();
        assertThat(noHedge.clock()).isSameAs(clock);
    }
}
