package dev.stagger.kafka.internal;

import dev.stagger.kafka.AttemptError;
import dev.stagger.kafka.KafkaHeaders;
import dev.stagger.internal.MessageHeaderNames;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * Reads and writes the {@link KafkaHeaders}. Lenient when reading: a value that is not what it
 * should be (not a number, longer than {@value #MAX_NUMBER_BYTES} bytes for a number or
 * {@value #MAX_TEXT_BYTES} for a text or history entry) counts as absent, so a mangled or hostile
 * header can neither stop a record nor make it expensive. Bounded when writing: each message is
 * cut to {@value #MAX_MESSAGE} characters and the history keeps at most {@value #MAX_HISTORY}
 * entries and {@value #MAX_HISTORY_BYTES} bytes (the first, and the latest that fit). A copy
 * carries the application's headers unchanged and none of the incoming {@code x-stagger-*} ones:
 * the consumer writes those afresh.
 */
public final class RecordHeaderCodec {
    static final int MAX_HISTORY = 50;
    static final int MAX_MESSAGE = 1_000;
    static final int MAX_HISTORY_BYTES = 16_384;
    static final int MAX_NUMBER_BYTES = 20;
    static final int MAX_TEXT_BYTES = 4_096;

    private RecordHeaderCodec() {
    }

    /** The last value of {@code name} as a number, or {@code fallback} when absent or malformed. */
    public static long number(Headers headers, String name, long fallback) {
        Header h = headers.lastHeader(name);
        byte[] v = h == null ? null : h.value();
        if (v == null || v.length == 0 || v.length > MAX_NUMBER_BYTES) {
            return fallback;
        }
        // Long.parseLong's grammar (an optional sign, then ASCII digits), read from the bytes without a String
        boolean negative = v[0] == '-';
        int i = negative || v[0] == '+' ? 1 : 0;
        if (i == v.length) {
            return fallback;
        }
        long n = 0;
        for (; i < v.length; i++) {
            int d = v[i] - '0';
            if (d < 0 || d > 9 || n < (Long.MIN_VALUE + d) / 10) {
                return fallback; // not a digit, or past the range
            }
            n = n * 10 - d; // accumulated negatively: Long.MIN_VALUE is reachable
        }
        if (!negative && n == Long.MIN_VALUE) {
            return fallback;
        }
        return negative ? n : -n;
    }

    /** The attempt a delivery is: {@link KafkaHeaders#ATTEMPT}, 1 when absent or out of range. */
    public static int attempt(Headers headers) {
        long n = number(headers, KafkaHeaders.ATTEMPT, 1);
        return n < 1 || n > Integer.MAX_VALUE ? 1 : (int) n;
    }

    /** The last value of {@code name} as text, or null when absent or too long. */
    public static @Nullable String text(Headers headers, String name) {
        Header h = headers.lastHeader(name);
        byte[] v = h == null ? null : h.value();
        return v == null || v.length > MAX_TEXT_BYTES ? null : new String(v, StandardCharsets.UTF_8);
    }

    /** The error history, oldest first; malformed entries are left out. */
    public static List<AttemptError> history(Headers headers) {
        List<AttemptError> out = new ArrayList<>();
        for (Header h : headers.headers(KafkaHeaders.ERRORS)) {
            AttemptError e = parse(h.value());
            if (e != null) {
                out.add(e);
            }
        }
        return out;
    }

    static @Nullable AttemptError parse(byte @Nullable [] value) {
        if (value == null || value.length > MAX_TEXT_BYTES) {
            return null;
        }
        String s = new String(value, StandardCharsets.UTF_8);
        String[] parts = s.split(";", 4);
        if (parts.length != 4 || !parts[0].startsWith("attempt=") || !parts[1].startsWith("failed_at=")
                || !parts[2].startsWith("exception=") || !parts[3].startsWith("message=")) {
            return null;
        }
        try {
            int attempt = Integer.parseInt(parts[0].substring("attempt=".length()));
            long at = Long.parseLong(parts[1].substring("failed_at=".length()));
            return new AttemptError(attempt, Instant.ofEpochMilli(at), parts[2].substring("exception=".length()),
                    parts[3].substring("message=".length()));
        } catch (NumberFormatException | java.time.DateTimeException e) {
            return null;
        }
    }

    static byte[] format(int attempt, long failedAtMillis, String exception, String message) {
        return ("attempt=" + attempt + ";failed_at=" + failedAtMillis + ";exception=" + exception.replace(';', '_')
                + ";message=" + message).getBytes(StandardCharsets.UTF_8);
    }

    /** A mutable copy of {@code headers} without any {@code x-stagger-*} header. */
    public static Headers applicationHeaders(Headers headers) {
        RecordHeaders copy = new RecordHeaders();
        for (Header h : headers) {
            if (!h.key().startsWith(MessageHeaderNames.PREFIX)) {
                copy.add(h);
            }
        }
        return copy;
    }

    /** Sets {@code name} on {@code headers} to the decimal {@code value}, replacing any earlier value. */
    public static void put(Headers headers, String name, long value) {
        put(headers, name, Long.toString(value));
    }

    /** Sets {@code name} on {@code headers} to {@code value} (UTF-8), replacing any earlier value. */
    public static void put(Headers headers, String name, String value) {
        headers.remove(name);
        headers.add(name, value.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Writes into {@code copy} the history read from {@code old} with {@code failure} of
     * {@code attempt} appended, within the bounds (the first entry and the latest that fit), and
     * the count of dropped entries, with those dropped before.
     */
    public static void appendError(Headers old, Headers copy, int attempt, long nowMillis, Throwable failure) {
        List<byte[]> entries = validEntries(old);
        String message = failure.getMessage();
        message = message == null ? "" : message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 3) + "...";
        entries.add(format(attempt, nowMillis, failure.getClass().getName(), message));
        long dropped = Math.max(0, number(old, KafkaHeaders.ERRORS_DROPPED, 0));
        putBounded(copy, entries, MAX_HISTORY, dropped);
    }

    /** Writes into {@code copy} the valid entries of the history in {@code old}, within the bounds. */
    public static void copyHistory(Headers old, Headers copy) {
        putBounded(copy, validEntries(old), MAX_HISTORY, Math.max(0, number(old, KafkaHeaders.ERRORS_DROPPED, 0)));
    }

    private static List<byte[]> validEntries(Headers old) {
        List<byte[]> entries = new ArrayList<>();
        for (AttemptError e : history(old)) {
            entries.add(format(e.attempt(), e.failedAt().toEpochMilli(), e.exceptionClass(), e.message()));
        }
        return entries;
    }

    /** Cuts the history in {@code copy} to its first and latest entries (a dead letter that did not fit otherwise). */
    public static void shrinkHistory(Headers copy) {
        List<byte[]> entries = new ArrayList<>();
        for (Header h : copy.headers(KafkaHeaders.ERRORS)) {
            entries.add(h.value());
        }
        putBounded(copy, entries, 2, Math.max(0, number(copy, KafkaHeaders.ERRORS_DROPPED, 0)));
    }

    private static void putBounded(Headers copy, List<byte[]> entries, int maxEntries, long dropped) {
        long bytes = 0;
        for (byte[] e : entries) {
            bytes += e.length;
        }
        while (entries.size() > 2 && (entries.size() > maxEntries || bytes > MAX_HISTORY_BYTES)) {
            bytes -= entries.remove(1).length; // the first stays: how it all began; the latest say how it goes now
            dropped++;
        }
        copy.remove(KafkaHeaders.ERRORS);
        for (byte[] e : entries) {
            copy.add(KafkaHeaders.ERRORS, e);
        }
        copy.remove(KafkaHeaders.ERRORS_DROPPED);
        if (dropped > 0) {
            put(copy, KafkaHeaders.ERRORS_DROPPED, Math.min(Integer.MAX_VALUE, dropped));
        }
    }
}
