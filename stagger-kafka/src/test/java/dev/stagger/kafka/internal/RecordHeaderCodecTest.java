package dev.stagger.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** {@link RecordHeaderCodec#number} reads what {@link Long#parseLong} reads, from the bytes, and nothing else. */
class RecordHeaderCodecTest {
    private static long read(String text) {
        RecordHeaders headers = new RecordHeaders();
        headers.add("n", text.getBytes(StandardCharsets.UTF_8));
        return RecordHeaderCodec.number(headers, "n", -42);
    }

    private static long parsed(String text) {
        if (text.isEmpty() || text.getBytes(StandardCharsets.UTF_8).length > RecordHeaderCodec.MAX_NUMBER_BYTES
                || !text.chars().allMatch(c -> c < 128)) {
            return -42;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return -42;
        }
    }

    @Test
    void readsEveryNumberParseLongReadsAndFallsBackOnTheRest() {
        List<String> texts = new ArrayList<>(List.of("0", "7", "-7", "+7", "-", "+", "", "12a", "a12", " 1", "1 ", "--1",
                "+-1", "007", "-0", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                "-9223372036854775809", "99999999999999999999", "1.5", "1e3", "١٢", "１２", "0x10"));
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 10_000; i++) {
            long n = random.nextLong() >> random.nextInt(64);
            texts.add(Long.toString(n));
            texts.add((n >= 0 ? "+" : "") + n);
            StringBuilder noise = new StringBuilder();
            for (int j = random.nextInt(1, 6); j > 0; j--) {
                noise.append("0123456789+-x ".charAt(random.nextInt(14)));
            }
            texts.add(noise.toString());
        }
        for (String t : texts) {
            assertThat(read(t)).as("'%s'", t).isEqualTo(parsed(t));
        }
    }

    @Test
    void anAbsentHeaderIsTheFallback() {
        assertThat(RecordHeaderCodec.number(new RecordHeaders(), "n", 5)).isEqualTo(5);
    }
}
