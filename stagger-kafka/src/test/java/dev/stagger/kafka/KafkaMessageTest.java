package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** KafkaMessage as a value: a first delivery's id formed from its coordinates, equality by parts. */
class KafkaMessageTest {
    private final RecordHeaders headers = new RecordHeaders();
    private final byte[] key = {1};
    private final byte[] value = {2, 3};
    private final Instant at = Instant.ofEpochMilli(1_000);

    @Test
    void aFirstDeliverysIdIsItsCoordinatesAndItEqualsTheSameMessageMadeWithThatId() {
        KafkaMessage first = KafkaMessage.firstDelivery("orders", 3, 42, key, value, headers, at);
        KafkaMessage made = new KafkaMessage("orders", 3, 42, key, value, headers, "orders/3/42", 1, at, List.of());
        assertThat(first.id()).isEqualTo("orders/3/42");
        assertThat(first.attempt()).isEqualTo(1);
        assertThat(first.history()).isEmpty();
        assertThat(first.firstAttemptAt()).isEqualTo(at);
        assertThat(first).isEqualTo(made).hasSameHashCodeAs(made).hasToString("KafkaMessage[topic=orders, id=orders/3/42, attempt=1, 2 bytes]");
        assertThat(KafkaMessage.firstDelivery("orders", 3, 42, key, value, headers, at)).isEqualTo(made);
    }

    @Test
    void aRetrysHistoryIsReadFromItsHeadersAndItEqualsTheSameMessageMadeWithThatHistory() {
        RecordHeaders h = new RecordHeaders();
        h.add(KafkaHeaders.ERRORS, "attempt=1;failed_at=500;exception=java.io.IOException;message=down".getBytes(
                java.nio.charset.StandardCharsets.UTF_8));
        h.add(KafkaHeaders.ERRORS, "not an entry".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        KafkaMessage retry = KafkaMessage.retry("orders", 3, 42, key, value, h, "orders/0/7", 2, at);
        List<AttemptError> history = List.of(new AttemptError(1, Instant.ofEpochMilli(500), "java.io.IOException", "down"));
        KafkaMessage made = new KafkaMessage("orders", 3, 42, key, value, h, "orders/0/7", 2, at, history);
        assertThat(retry.history()).as("the malformed entry left out").isEqualTo(history);
        assertThat(retry).isEqualTo(made).hasSameHashCodeAs(made);
        assertThat(retry.id()).isEqualTo("orders/0/7");
        assertThatThrownBy(() -> retry.history().clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void messagesDifferingInAnyPartAreNotEqual() {
        KafkaMessage m = new KafkaMessage("orders", 0, 1, key, value, headers, "orders/0/1", 1, at, List.of());
        assertThat(m).isNotEqualTo(new KafkaMessage("orders", 0, 1, key, value, headers, "other/0/1", 1, at, List.of()))
                .isNotEqualTo(new KafkaMessage("orders", 0, 1, key, value, headers, "orders/0/1", 2, at, List.of()))
                .isNotEqualTo(new KafkaMessage("orders", 0, 1, new byte[] {1}, value, headers, "orders/0/1", 1, at, List.of()))
                .isNotEqualTo(KafkaMessage.firstDelivery("orders", 0, 2, key, value, headers, at));
    }

    @Test
    void badPartsAreRefusedNamingTheField() {
        assertThatThrownBy(() -> new KafkaMessage("orders", 0, 1, key, value, headers, null, 1, at, List.of()))
                .hasMessage("id must not be null");
        assertThatThrownBy(() -> KafkaMessage.firstDelivery(null, 0, 1, key, value, headers, at))
                .hasMessage("topic must not be null");
        assertThatThrownBy(() -> new KafkaMessage("orders", 0, 1, key, value, headers, "x", 0, at, List.of()))
                .hasMessage("attempt must be at least 1, got 0");
    }
}
