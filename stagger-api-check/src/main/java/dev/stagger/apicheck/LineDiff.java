package dev.stagger.apicheck;

import java.util.List;

/** A line diff of two dumps (longest common subsequence), each changed line under its type's header. */
public final class LineDiff {

    private LineDiff() {
    }

    /** Lines only in {@code before} as "- ", lines only in {@code after} as "+ ", with the enclosing type. */
    public static String diff(String before, String after) {
        List<String> a = before.lines().toList();
        List<String> b = after.lines().toList();
        int[][] common = new int[a.size() + 1][b.size() + 1];
        for (int i = a.size() - 1; i >= 0; i--) {
            for (int j = b.size() - 1; j >= 0; j--) {
                common[i][j] = a.get(i).equals(b.get(j))
                        ? common[i + 1][j + 1] + 1
                        : Math.max(common[i + 1][j], common[i][j + 1]);
            }
        }
        StringBuilder out = new StringBuilder();
        String header = null;
        String shownHeader = null;
        int i = 0;
        int j = 0;
        while (i < a.size() || j < b.size()) {
            String line;
            char mark;
            if (i < a.size() && j < b.size() && a.get(i).equals(b.get(j))) {
                line = a.get(i);
                mark = ' ';
                i++;
                j++;
            } else if (j < b.size() && (i == a.size() || common[i][j + 1] >= common[i + 1][j])) {
                line = b.get(j++);
                mark = '+';
            } else {
                line = a.get(i++);
                mark = '-';
            }
            boolean isHeader = line.endsWith("{");
            if (isHeader) {
                header = line;
            }
            if (mark != ' ') {
                if (!isHeader && header != null && !header.equals(shownHeader)) {
                    out.append("  ").append(header).append('\n');
                }
                shownHeader = isHeader ? line : header;
                out.append(mark).append(' ').append(line).append('\n');
            }
        }
        return out.toString();
    }
}
