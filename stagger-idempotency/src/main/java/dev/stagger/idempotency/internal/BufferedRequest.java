package dev.stagger.idempotency.internal;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A request whose body was read up front (to fingerprint it) and is served again from memory.
 * Form parameters are parsed from the buffered body, since the container can no longer read it.
 */
public final class BufferedRequest extends HttpServletRequestWrapper {
    private final byte[] body;
    private final int length;
    private Map<String, String[]> parameters;

    public BufferedRequest(HttpServletRequest request, byte[] body, int length) {
        super(request);
        this.body = body;
        this.length = length;
    }

    @Override
    public ServletInputStream getInputStream() {
        ByteArrayInputStream in = new ByteArrayInputStream(body, 0, length);
        return new ServletInputStream() {
            @Override
            public boolean isFinished() {
                return in.available() == 0;
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setReadListener(ReadListener listener) {
                try {
                    listener.onDataAvailable();
                    listener.onAllDataRead();
                } catch (IOException e) {
                    listener.onError(e);
                }
            }

            @Override
            public int read() {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                return in.read(b, off, len);
            }
        };
    }

    @Override
    public BufferedReader getReader() {
        return new BufferedReader(new InputStreamReader(getInputStream(), charset()));
    }

    private Charset charset() {
        String encoding = getCharacterEncoding();
        try {
            return encoding == null ? StandardCharsets.ISO_8859_1 : Charset.forName(encoding);
        } catch (IllegalArgumentException e) {
            return StandardCharsets.ISO_8859_1;
        }
    }

    @Override
    public String getParameter(String name) {
        String[] values = parameters().get(name);
        return values == null ? null : values[0];
    }

    @Override
    public Map<String, String[]> getParameterMap() {
        return parameters();
    }

    @Override
    public Enumeration<String> getParameterNames() {
        return Collections.enumeration(parameters().keySet());
    }

    @Override
    public String[] getParameterValues(String name) {
        String[] values = parameters().get(name);
        return values == null ? null : values.clone();
    }

    private Map<String, String[]> parameters() {
        if (parameters == null) {
            Map<String, List<String>> collected = new LinkedHashMap<>();
            parse(getQueryString(), StandardCharsets.UTF_8, collected);
            String type = getContentType();
            if (type != null && type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded")) {
                Charset cs = getCharacterEncoding() == null ? StandardCharsets.UTF_8 : charset();
                parse(new String(body, 0, length, cs), cs, collected);
            }
            Map<String, String[]> result = new LinkedHashMap<>();
            collected.forEach((k, v) -> result.put(k, v.toArray(new String[0])));
            parameters = Collections.unmodifiableMap(result);
        }
        return parameters;
    }

    private static void parse(String encoded, Charset charset, Map<String, List<String>> into) {
        if (encoded == null || encoded.isEmpty()) {
            return;
        }
        for (String pair : encoded.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            try {
                String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), charset);
                String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), charset);
                into.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
            } catch (IllegalArgumentException malformed) {
                // a malformed escape is skipped, as containers do
            }
        }
    }
}
