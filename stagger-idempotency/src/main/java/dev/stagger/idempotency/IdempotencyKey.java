package dev.stagger.idempotency;

import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A validated {@code Idempotency-Key} header value.
 *
 * <p>The IETF draft defines the header as an RFC 8941 String item ({@code "8e03978e-40d5"}).
 * Clients often omit the quotes, so both forms are accepted. The decoded value must be 1 to
 * {@value #MAX_LENGTH} characters from a conservative alphabet: ASCII letters, digits and
 * {@code - _ . : ~ + / =}. That covers UUIDs, ULIDs, base64/base64url and prefixed keys such as
 * {@code order:42}, while keys carrying quotes, backslashes, spaces, control characters or SQL and
 * shell metacharacters ({@code ' ; % * ` < >}) are refused outright: such keys are never needed by an
 * honest client, and refusing them keeps every log line and query that touches a key boring.
 *
 * <p>Immutable; equality is by value.
 */
public final class IdempotencyKey {
    /** The longest accepted key, as in Stripe's API. */
    public static final int MAX_LENGTH = 255;

    private final String value;

    private IdempotencyKey(String value) {
        this.value = value;
    }

    /**
     * Parses a header value: an RFC 8941 String ({@code "abc"}, with {@code \"} and {@code \\}
     * escapes) or the bare token {@code abc}. Surrounding spaces and tabs (HTTP OWS) are ignored.
     *
     * @return the key, or empty when the value is null, malformed, too long or uses a character
     *     outside the alphabet
     */
    public static Optional<IdempotencyKey> parse(@Nullable String headerValue) {
        if (headerValue == null || headerValue.length() > 4 * MAX_LENGTH) {
            return Optional.empty();
        }
        String s = trimOws(headerValue);
        String decoded = s.startsWith("\"") ? unquote(s) : s;
        return decoded != null && isValidValue(decoded) ? Optional.of(new IdempotencyKey(decoded)) : Optional.empty();
    }

    /**
     * A key from its decoded value (no quotes), for code that generates keys.
     *
     * @throws IllegalArgumentException naming the problem when the value is not a valid key
     */
    public static IdempotencyKey of(@Nullable String value) {
        if (value == null || !isValidValue(value)) {
            throw new IllegalArgumentException("value must be 1-" + MAX_LENGTH
                    + " characters of [A-Za-z0-9-_.:~+/=], got " + describe(value));
        }
        return new IdempotencyKey(value);
    }

    /** The decoded key. */
    public String value() {
        return value;
    }

    /** The key as an RFC 8941 String, ready to send in a header. */
    public String toHeaderValue() {
        return '"' + value + '"';
    }

    static boolean isValidValue(String v) {
        int n = v.length();
        if (n < 1 || n > MAX_LENGTH) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (!isKeyChar(v.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean isKeyChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '-' || c == '_' || c == '.' || c == ':' || c == '~' || c == '+' || c == '/' || c == '=';
    }

    /** RFC 8941 §4.2.5: the string must be closed, escapes are only \" and \\; nothing may follow. */
    private static @Nullable String unquote(String s) {
        StringBuilder out = new StringBuilder(s.length());
        int i = 1;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == '\\') {
                if (i + 1 >= s.length()) {
                    return null;
                }
                char next = s.charAt(i + 1);
                if (next != '"' && next != '\\') {
                    return null;
                }
                out.append(next);
                i += 2;
            } else if (c == '"') {
                return i == s.length() - 1 ? out.toString() : null;
            } else if (c < 0x20 || c > 0x7e) {
                return null;
            } else {
                out.append(c);
                i++;
            }
        }
        return null;
    }

    private static String trimOws(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && (s.charAt(start) == ' ' || s.charAt(start) == '\t')) {
            start++;
        }
        while (end > start && (s.charAt(end - 1) == ' ' || s.charAt(end - 1) == '\t')) {
            end--;
        }
        return s.substring(start, end);
    }

    private static String describe(@Nullable String value) {
        if (value == null) {
            return "null";
        }
        return value.length() > 40 ? "a value of length " + value.length() : "'" + value + "'";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IdempotencyKey && ((IdempotencyKey) o).value.equals(value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    /** The key itself: keys are not secrets, but they are only unique within a client's scope. */
    @Override
    public String toString() {
        return value;
    }
}
