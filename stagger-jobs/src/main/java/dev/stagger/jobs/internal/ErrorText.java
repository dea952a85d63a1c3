package dev.stagger.jobs.internal;

/** Bounded text for the error history, so one noisy failure cannot bloat the table. */
public final class ErrorText {
    static final int MAX_MESSAGE = 2_000;
    static final int MAX_FRAMES = 25;
    static final int MAX_STACK = 8_000;

    private ErrorText() {
    }

    public static String message(Throwable t) {
        String m = t.getMessage();
        return m == null ? "" : truncate(m, MAX_MESSAGE);
    }

    /**
     * The first frames of the failure, then the first line of each exception suppressed by it (a
     * classifier's own failure, say) and of each cause.
     */
    public static String stack(Throwable t) {
        StringBuilder out = new StringBuilder(t.toString()).append('\n');
        StackTraceElement[] frames = t.getStackTrace();
        for (int i = 0; i < Math.min(frames.length, MAX_FRAMES); i++) {
            out.append("\tat ").append(frames[i]).append('\n');
        }
        if (frames.length > MAX_FRAMES) {
            out.append("\t... ").append(frames.length - MAX_FRAMES).append(" more\n");
        }
        Throwable[] suppressed = t.getSuppressed();
        for (int i = 0; i < Math.min(suppressed.length, 5); i++) {
            out.append("Suppressed: ").append(suppressed[i]).append('\n');
            firstFrame(out, suppressed[i]);
        }
        Throwable cause = t.getCause();
        for (int depth = 0; cause != null && cause != t && depth < 5; depth++) {
            out.append("Caused by: ").append(cause).append('\n');
            firstFrame(out, cause);
            cause = cause.getCause();
        }
        return truncate(out.toString(), MAX_STACK);
    }

    private static void firstFrame(StringBuilder out, Throwable t) {
        StackTraceElement[] frames = t.getStackTrace();
        if (frames.length > 0) {
            out.append("\tat ").append(frames[0]).append('\n');
        }
    }

    private static String truncate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 3) + "...";
    }
}
