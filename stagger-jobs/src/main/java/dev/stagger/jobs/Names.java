package dev.stagger.jobs;

import dev.stagger.jdbc.internal.Echo;

/**
 * The names a job store keeps (queues, types, keys, worker ids), checked the same way for every
 * database before anything is stored: not blank, not too long, and text every database stores
 * as given. PostgreSQL refuses a NUL character in text, and an unpaired surrogate cannot be
 * encoded as UTF-8 (the driver would store a different string), so both are refused here rather
 * than failing (or, on SQLite, being stored and never matched) later.
 */
final class Names {
    static final int MAX_NAME = 200;
    static final int MAX_KEY = 300;

    private Names() {
    }

    /** A queue, type or worker id: 1 to 200 characters, not blank. */
    static String name(String field, String value) {
        return check(field, value, MAX_NAME);
    }

    /** A unique job key: 1 to 300 characters, not blank. */
    static String key(String value) {
        return check("key", value, MAX_KEY);
    }

    private static String check(String field, String value, int max) {
        if (value == null || value.isBlank() || value.length() > max) {
            throw new IllegalArgumentException(field + " must be 1 to " + max + " non-blank characters, got "
                    + Echo.of(value));
        }
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            if (ch == '\0') {
                throw new IllegalArgumentException(field + " must not contain a NUL character (at index " + i + "), got "
                        + Echo.of(value.replace('\0', '?')));
            }
            if (Character.isHighSurrogate(ch) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(ch)) {
                throw new IllegalArgumentException(field + " must be valid UTF-16 text (an unpaired surrogate at index " + i
                        + "), got " + Echo.of(value.replace(ch, '?')));
            }
        }
        return value;
    }
}
