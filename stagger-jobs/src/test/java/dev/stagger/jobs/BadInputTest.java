package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad values are refused where they are given, with a short message naming the field, on every database. */
class BadInputTest {
    @TempDir
    Path dir;

    @Test
    void runAtBeyondStoredTimesIsRefusedAtTheSetter() {
        for (Instant bad : new Instant[] {Instant.MAX, Instant.MIN}) {
            assertThatThrownBy(() -> EnqueueOptions.defaults().runAt(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("runAt ");
        }
    }

    @Test
    void aDelayBeyondStoredTimesIsRefusedAtTheSetter() {
        assertThatThrownBy(() -> EnqueueOptions.defaults().delay(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("delay ");
    }

    @Test
    void aLongBadValueIsEchoedAsItsFirst64CharactersAndItsLength() {
        String key = "k".repeat(10_000);
        assertThatThrownBy(() -> EnqueueOptions.defaults().key(key))
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200).contains("k".repeat(64))
                        .doesNotContain("k".repeat(65)).contains("10000"));
        String type = "t".repeat(10_000);
        assertThatThrownBy(() -> JobRequest.of("q", type, "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200).contains("10000"));
    }

    @Test
    void aNulCharacterInATypeQueueOrKeyIsRefusedBeforeAnythingIsStored() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, new VirtualClock());
        assertThatThrownBy(() -> jobs.enqueue("q", "ty\u0000pe", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("type");
        assertThatThrownBy(() -> jobs.enqueue("q\u0000", "type", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> EnqueueOptions.defaults().key("k\u0000"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
        assertThat(jobs.admin().countByState(null).values()).allMatch(n -> n == 0);
    }
}
