package dev.stagger.rabbitmq.internal;

import dev.stagger.rabbitmq.MessageError;
import dev.stagger.rabbitmq.MessageHeaders;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads and writes the {@link MessageHeaders}. Lenient when reading (a header of the wrong type is
 * treated as absent: a message must never be stuck because a header was mangled); bounded when
 * writing (the history keeps its last {@value #MAX_HISTORY} entries, each message cut to
 * {@value #MAX_MESSAGE} characters), so headers stay far below the broker's frame size.
 */
public final class HeaderCodec {
    static final int MAX_HISTORY = 50;
    static final int MAX_MESSAGE = 1_000;
    /** Headers the broker adds when a message passes through a delay queue; our own history replaces them. */
    private static final List<String> BROKER_DEATH_HEADERS =
            List.of("x-death", "x-first-death-exchange", "x-first-death-queue", "x-first-death-reason",
                    "x-last-death-exchange", "x-last-death-queue", "x-last-death-reason");

    private HeaderCodec() {
    }

    public static int attempt(Map<String, Object> headers) {
        long n = number(headers, MessageHeaders.ATTEMPT, 1);
        return n < 1 || n > Integer.MAX_VALUE ? 1 : (int) n;
    }

    public static long number(Map<String, Object> headers, String name, long fallback) {
        Object v = headers == null ? null : headers.get(name);
        return v instanceof Number n ? n.longValue() : fallback;
    }

    public static boolean has(Map<String, Object> headers, String name) {
        return headers != null && headers.get(name) instanceof Number;
    }

    public static String text(Map<String, Object> headers, String name) {
        Object v = headers == null ? null : headers.get(name);
        return v == null ? null : v.toString(); // LongString prints as its UTF-8 text
    }

    public static List<MessageError> history(Map<String, Object> headers) {
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

    /** The history with {@code failure} of {@code attempt} appended, as a header value. */
    public static List<Object> appendError(Map<String, Object> headers, int attempt, long nowMillis, Throwable failure) {
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
        while (entries.size() > MAX_HISTORY) {
            entries.remove(0);
        }
        return entries;
    }

    /** A mutable copy of {@code headers} without the broker's dead-lettering bookkeeping. */
    public static Map<String, Object> copyForRepublish(Map<String, Object> headers) {
        Map<String, Object> copy = headers == null ? new HashMap<>() : new HashMap<>(headers);
        BROKER_DEATH_HEADERS.forEach(copy::remove);
        return copy;
    }
}
