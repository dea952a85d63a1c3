package dev.stagger.idempotency.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Headers as text, one {@code name: value} per line (stored values never contain CR or LF). */
public final class HeaderCodec {
    private HeaderCodec() {
    }

    public static String encode(Map<String, List<String>> headers) {
        StringBuilder sb = new StringBuilder();
        headers.forEach((name, values) -> values.forEach(v -> sb.append(name).append(": ").append(v).append('\n')));
        return sb.toString();
    }

    public static Map<String, List<String>> decode(String text) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        if (text == null || text.isEmpty()) {
            return headers;
        }
        for (String line : text.split("\n")) {
            int colon = line.indexOf(": ");
            if (colon > 0) {
                headers.computeIfAbsent(line.substring(0, colon), n -> new ArrayList<>()).add(line.substring(colon + 2));
            }
        }
        return headers;
    }
}
