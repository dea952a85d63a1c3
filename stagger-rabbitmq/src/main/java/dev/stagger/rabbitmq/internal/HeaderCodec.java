package dev.stagger.rabbitmq.internal;

import com.rabbitmq.client.impl.Frame;
import dev.stagger.rabbitmq.MessageError;
import dev.stagger.rabbitmq.MessageHeaders;
import java.io.UnsupportedEncodingException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Reads and writes the {@link MessageHeaders}. Lenient when reading (a header of the wrong type is
 * treated as absent: a message must never be stuck because a header was mangled); bounded when
 * writing: each error message is cut to {@value #MAX_MESSAGE} characters, and the history keeps
 * at most {@value #MAX_HISTORY} entries and {@value #MAX_HISTORY_BYTES} bytes as the broker
 * encodes them, by keeping the first entry and as many of the latest as fit and counting the
 * dropped ones in {@link MessageHeaders#ERRORS_DROPPED}. What the application put in the headers
 * is not bounded here: {@link #headersBytes} measures the whole table against the broker's frame
 * size before a copy is published.
 */
public final class HeaderCodec {
    static final int MAX_HISTORY = 50;
    static final int MAX_MESSAGE = 1_000;
    static final int MAX_HISTORY_BYTES = 16_384;
    /** Headers the broker adds when a message passes through a delay queue; our own history replaces them. */
    private static final List<String> BROKER_DEATH_HEADERS =
            List.of("x-death", "x-first-death-exchange", "x-first-death-queue", "x-first-death-reason",
                    "x-last-death-exchange", "x-last-death-queue", "x-last-death-reason");

    private HeaderCodec() {
    }

    public static int attempt(@Nullable Map<String, Object> headers) {
        long n = number(headers, MessageHeaders.ATTEMPT, 1);
        return n < 1 || n > Integer.MAX_VALUE ? 1 : (int) n;
    }

    public static long number(@Nullable Map<String, Object> headers, String name, long fallback) {
        Object v = headers == null ? null : headers.get(name);
        return v instanceof Number n ? n.longValue() : fallback;
    }

    public static boolean has(@Nullable Map<String, Object> headers, String name) {
        return headers != null && headers.get(name) instanceof Number;
    }

    public static @Nullable String text(@Nullable Map<String, Object> headers, String name) {
        Object v = headers == null ? null : headers.get(name);
        return v == null ? null : v.toString(); // LongString prints as its UTF-8 text
    }

    public static List<MessageError> history(@Nullable Map<String, Object> headers) {
        Object v = headers == null ? null : headers.get(MessageHeaders.ERRORS);
        if (!(v instanceof List<?> entries)) {
            return List.of();
        }
        List<MessageError> out = new ArrayList<>(entries.size());
        for (Object e : entries) {
            if (e instanceof Map<?, ?> m) {
                Object attempt = m.get("attempt");
                Object at = m.get("failed_at");
                Object exception = m.get("exception");
                Object message = m.get("message");
                out.add(new MessageError(attempt instanceof Number n ? n.intValue() : 0,
                        Instant.ofEpochMilli(at instanceof Number n ? n.longValue() : 0),
                        exception == null ? "" : exception.toString(), message == null ? "" : message.toString()));
            }
        }
        return out;
    }

    /**
     * Puts into {@code copy} the history of {@code headers} with {@code failure} of {@code attempt}
     * appended, within the bounds: when it would exceed them, the entries after the first are
     * dropped oldest first and {@link MessageHeaders#ERRORS_DROPPED} counts them (with those
     * dropped before).
     */
    public static void appendError(@Nullable Map<String, Object> headers, Map<String, Object> copy, int attempt,
                                   long nowMillis, Throwable failure) {
        List<Object> entries = new ArrayList<>();
        Object v = headers == null ? null : headers.get(MessageHeaders.ERRORS);
        if (v instanceof List<?> old) {
            for (Object e : old) {
                if (e instanceof Map<?, ?>) {
                    entries.add(e);
                }
            }
        }
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("attempt", attempt);
        entry.put("failed_at", nowMillis);
        entry.put("exception", failure.getClass().getName());
        String message = failure.getMessage();
        entry.put("message", message == null ? "" : message.length() <= MAX_MESSAGE ? message
                : message.substring(0, MAX_MESSAGE - 3) + "...");
        entries.add(entry);
        putBounded(headers, copy, entries, MAX_HISTORY, MAX_HISTORY_BYTES);
    }

    /**
     * Cuts the history in {@code copy} to its first and latest entries (a dead letter that did
     * not fit otherwise), counting the dropped ones.
     */
    public static void shrinkHistory(Map<String, Object> copy) {
        Object v = copy.get(MessageHeaders.ERRORS);
        if (v instanceof List<?> old) {
            putBounded(copy, copy, new ArrayList<>(old), 2, MAX_HISTORY_BYTES);
        }
    }

    private static void putBounded(@Nullable Map<String, Object> headers, Map<String, Object> copy, List<Object> entries,
                                   int maxEntries, int maxBytes) {
        long dropped = Math.max(0, number(headers, MessageHeaders.ERRORS_DROPPED, 0));
        while (entries.size() > 2 && (entries.size() > maxEntries || arrayBytes(entries) > maxBytes)) {
            entries.remove(1); // the first stays: how it all began; the latest say how it goes now
            dropped++;
        }
        copy.put(MessageHeaders.ERRORS, entries);
        if (dropped > 0) {
            copy.put(MessageHeaders.ERRORS_DROPPED, (int) Math.min(Integer.MAX_VALUE, dropped));
        }
    }

    private static long arrayBytes(List<Object> entries) {
        try {
            return Frame.arraySize(entries);
        } catch (UnsupportedEncodingException e) {
            throw new IllegalStateException("UTF-8 is always supported", e);
        }
    }

    /** The size of {@code headers} as the broker receives them (an AMQP field table), in bytes. */
    public static long headersBytes(Map<String, Object> headers) {
        try {
            return Frame.tableSize(headers);
        } catch (UnsupportedEncodingException e) {
            throw new IllegalStateException("UTF-8 is always supported", e);
        }
    }

    /** A mutable copy of {@code headers} without the broker's dead-lettering bookkeeping. */
    public static Map<String, Object> copyForRepublish(@Nullable Map<String, Object> headers) {
        Map<String, Object> copy = headers == null ? new HashMap<>() : new HashMap<>(headers);
        BROKER_DEATH_HEADERS.forEach(copy::remove);
        return copy;
    }
}
