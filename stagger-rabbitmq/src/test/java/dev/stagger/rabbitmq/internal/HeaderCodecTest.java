package dev.stagger.rabbitmq.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.rabbitmq.MessageError;
import dev.stagger.rabbitmq.MessageHeaders;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeaderCodecTest {
    /** Appends {@code attempts} failures of {@code text}, as {@code attempts} deliveries would. */
    private static Map<String, Object> afterFailures(int attempts, String text) {
        Map<String, Object> headers = new HashMap<>();
        for (int attempt = 1; attempt <= attempts; attempt++) {
            Map<String, Object> copy = HeaderCodec.copyForRepublish(headers);
            HeaderCodec.appendError(headers, copy, attempt, 1_000L * attempt, new IOException(attempt + " " + text));
            headers = copy;
        }
        return headers;
    }

    @Test
    void aHistoryOfLongNonAsciiMessagesStaysWithinItsByteBoundKeepingTheFirstAndLatestEntries() {
        Map<String, Object> headers = afterFailures(60, "€".repeat(1_000)); // 3 bytes a character
        assertThat(HeaderCodec.headersBytes(headers)).isLessThanOrEqualTo(HeaderCodec.MAX_HISTORY_BYTES + 64);
        List<Integer> attempts = HeaderCodec.history(headers).stream().map(MessageError::attempt).toList();
        assertThat(attempts.get(0)).isEqualTo(1);
        assertThat(attempts.subList(1, attempts.size())).isEqualTo(
                java.util.stream.IntStream.rangeClosed(61 - (attempts.size() - 1), 60).boxed().toList());
        assertThat(headers.get(MessageHeaders.ERRORS_DROPPED)).isEqualTo(60 - attempts.size());
    }

    @Test
    void shortMessagesKeepTheFirstAndTheLatestFortyNineOfFiftyEntries() {
        Map<String, Object> headers = afterFailures(70, "short");
        List<Integer> attempts = HeaderCodec.history(headers).stream().map(MessageError::attempt).toList();
        assertThat(attempts).hasSize(HeaderCodec.MAX_HISTORY);
        assertThat(attempts.get(0)).isEqualTo(1);
        assertThat(attempts.get(1)).isEqualTo(22);
        assertThat(attempts.get(attempts.size() - 1)).isEqualTo(70);
        assertThat(headers.get(MessageHeaders.ERRORS_DROPPED)).isEqualTo(20);
    }

    @Test
    void aShortHistoryIsKeptWholeWithoutADroppedCount() {
        Map<String, Object> headers = afterFailures(3, "x");
        assertThat(HeaderCodec.history(headers)).extracting(MessageError::attempt).containsExactly(1, 2, 3);
        assertThat(headers).doesNotContainKey(MessageHeaders.ERRORS_DROPPED);
    }

    @Test
    void shrinkingKeepsTheFirstAndTheLatestAndCountsTheRest() {
        Map<String, Object> headers = afterFailures(10, "x");
        HeaderCodec.shrinkHistory(headers);
        assertThat(HeaderCodec.history(headers)).extracting(MessageError::attempt).containsExactly(1, 10);
        assertThat(headers.get(MessageHeaders.ERRORS_DROPPED)).isEqualTo(8);
    }
}
