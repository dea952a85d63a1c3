package dev.stagger.cli;

import java.io.PrintStream;
import java.util.Locale;

/** A one-line progress bar on stderr, redrawn in place; silent when not drawing to a terminal. */
final class SimProgressBar {
    private static final int WIDTH = 30;
    private static final long FIRST_DRAW_NANOS = 500_000_000L; // short runs never show a bar

    private final PrintStream err;
    private final boolean enabled;
    private final long started = System.nanoTime();
    private int lastFilled = -1;
    private boolean drawn;

    SimProgressBar(PrintStream err, boolean enabled) {
        this.err = err;
        this.enabled = enabled;
    }

    void update(int done, int total) {
        if (!enabled || System.nanoTime() - started < FIRST_DRAW_NANOS) {
            return;
        }
        int filled = (int) ((long) done * WIDTH / total);
        if (filled == lastFilled) {
            return;
        }
        lastFilled = filled;
        drawn = true;
        err.printf(Locale.ROOT, "\r[%s%s] %d/%d runs", "#".repeat(filled), ".".repeat(WIDTH - filled), done, total);
        err.flush();
    }

    void finish() {
        if (drawn) {
            err.print("\r" + " ".repeat(WIDTH + 30) + "\r");
            err.flush();
        }
    }
}
