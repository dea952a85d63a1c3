package dev.stagger.cli;

import java.util.BitSet;

/**
 * Which exit codes {@code stagger run} retries: "any non-zero" by default, or a list such as
 * {@code 1,75-78} (codes and inclusive ranges, 0 to 255).
 */
final class RunExitCodes {
    private final BitSet codes;

    private RunExitCodes(BitSet codes) {
        this.codes = codes;
    }

    static RunExitCodes anyNonZero() {
        BitSet all = new BitSet(256);
        all.set(1, 256);
        return new RunExitCodes(all);
    }

    /** @throws IllegalArgumentException naming the bad part */
    static RunExitCodes parse(String text) {
        BitSet set = new BitSet(256);
        for (String part : text.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int dash = p.indexOf('-', 1);
            int from = code(p.substring(0, dash < 0 ? p.length() : dash), text);
            int to = dash < 0 ? from : code(p.substring(dash + 1), text);
            if (to < from) {
                throw new IllegalArgumentException("invalid --retry-on-exit '" + text + "': range " + p + " is backwards");
            }
            set.set(from, to + 1);
        }
        if (set.isEmpty()) {
            throw new IllegalArgumentException("invalid --retry-on-exit '" + text + "': no exit codes given");
        }
        return new RunExitCodes(set);
    }

    private static int code(String s, String whole) {
        try {
            int c = Integer.parseInt(s.trim());
            if (c >= 0 && c <= 255) {
                return c;
            }
        } catch (NumberFormatException ignored) {
            // reported below with the whole value
        }
        throw new IllegalArgumentException("invalid --retry-on-exit '" + whole + "': '" + s + "' is not an exit code 0-255");
    }

    boolean retries(int exitCode) {
        return exitCode >= 0 && exitCode < 256 && codes.get(exitCode);
    }
}
