package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import org.jspecify.annotations.Nullable;

/** Reads bounded request fields; bad values name the field (they become 400 responses). */
final class Json {
    private Json() {
    }

    static int intField(JsonNode request, String field, int fallback, int min, int max) {
        JsonNode n = request.get(field);
        Double v = number(n, field);
        if (v == null) {
            return fallback;
        }
        if (!(v >= min && v <= max) || v != Math.rint(v)) {
            throw new IllegalArgumentException(field + " must be a whole number in [" + min + ", " + max + "], got " + n.asText());
        }
        return v.intValue();
    }

    static double doubleField(JsonNode request, String field, double fallback, double min, double max) {
        JsonNode n = request.get(field);
        Double v = number(n, field);
        if (v == null) {
            return fallback;
        }
        if (!(v >= min && v <= max)) {
            throw new IllegalArgumentException(field + " must be in [" + min + ", " + max + "], got " + n.asText());
        }
        return v;
    }

    /** The field as a number (JSON number or numeric text), or null when absent or blank. */
    private static @Nullable Double number(@Nullable JsonNode n, String field) {
        if (n == null || n.isNull() || (n.isTextual() && n.asText().isBlank())) {
            return null;
        }
        if (!(n.isNumber() || n.isTextual())) {
            throw new IllegalArgumentException(field + " must be a number, got " + n);
        }
        try {
            return n.isNumber() ? n.asDouble() : Double.parseDouble(n.asText().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(field + " must be a number, got '" + n.asText() + "'");
        }
    }

    static String choice(JsonNode request, String field, String fallback, String... allowed) {
        String text = text(request, field, "");
        if (text.isBlank()) {
            return fallback;
        }
        for (String a : allowed) {
            if (a.equals(text)) {
                return a;
            }
        }
        throw new IllegalArgumentException(field + " must be one of " + String.join(", ", allowed) + ", got '" + text + "'");
    }

    /** A text field; absent or null gives {@code fallback}, and an object, array or other non-text value is refused. */
    static String text(JsonNode request, String field, String fallback) {
        JsonNode n = request.get(field);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.isValueNode()) {
            throw new IllegalArgumentException(field + " must be text, got " + n);
        }
        return n.asText();
    }

    static boolean boolField(JsonNode request, String field, boolean fallback) {
        JsonNode n = request.get(field);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (n.isBoolean()) {
            return n.asBoolean();
        }
        if (!n.isValueNode()) {
            throw new IllegalArgumentException(field + " must be true or false, got " + n);
        }
        String s = n.asText();
        if ("true".equals(s) || "false".equals(s)) {
            return Boolean.parseBoolean(s);
        }
        throw new IllegalArgumentException(field + " must be true or false, got '" + s + "'");
    }
}
