package dev.stagger.jdbc.internal;

/** How a bad configured value appears in an exception message: quoted, at most 64 characters, with its length when cut. */
public final class Echo {
    private static final int LIMIT = 64;

    private Echo() {
    }

    public static String of(String value) {
        if (value == null) {
            return "null";
        }
        return value.length() <= LIMIT ? "'" + value + "'"
                : "'" + value.substring(0, LIMIT) + "...' (" + value.length() + " characters)";
    }
}
