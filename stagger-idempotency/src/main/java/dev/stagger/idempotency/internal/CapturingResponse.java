package dev.stagger.idempotency.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * Holds the body back in memory so it can be stored before it is sent. Status and headers go
 * straight to the wrapped response (nothing is committed until the body is released). When the
 * body outgrows the limit, or the handler sends an error or goes async, capture is abandoned:
 * what was held is written out and the rest streams through, and the response is not stored.
 */
public final class CapturingResponse extends HttpServletResponseWrapper {
    private final int limit;
    private final ByteArrayOutputStream held = new ByteArrayOutputStream();
    private boolean capturing = true;
    private boolean abandoned;
    private ServletOutputStream stream;
    private PrintWriter writer;

    public CapturingResponse(HttpServletResponse response, int limit) {
        super(response);
        this.limit = limit;
    }

    /** True when the response cannot be stored (too large, error sent, async). */
    public boolean abandoned() {
        return abandoned;
    }

    /** The captured body; flushes a writer first. */
    public byte[] body() {
        if (writer != null) {
            writer.flush();
        }
        return held.toByteArray();
    }

    /** Stops capturing: writes what was held and lets the rest stream through. */
    public void abandon() throws IOException {
        if (!capturing) {
            return;
        }
        if (writer != null) {
            writer.flush();
        }
        capturing = false;
        abandoned = true;
        if (held.size() > 0) {
            getResponse().getOutputStream().write(held.toByteArray());
            held.reset();
        }
    }

    /** Sends the captured body for real. */
    public void release() throws IOException {
        byte[] body = body();
        capturing = false;
        HttpServletResponse response = (HttpServletResponse) getResponse();
        if (!response.isCommitted()) {
            response.setContentLength(body.length);
        }
        response.getOutputStream().write(body);
    }

    private void write(byte[] b, int off, int len) throws IOException {
        if (capturing && held.size() + (long) len > limit) {
            abandon();
        }
        if (capturing) {
            held.write(b, off, len);
        } else {
            getResponse().getOutputStream().write(b, off, len);
        }
    }

    @Override
    public ServletOutputStream getOutputStream() {
        if (stream == null) {
            stream = new ServletOutputStream() {
                private final byte[] one = new byte[1];

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setWriteListener(WriteListener listener) {
                    try {
                        listener.onWritePossible();
                    } catch (IOException e) {
                        listener.onError(e);
                    }
                }

                @Override
                public void write(int b) throws IOException {
                    one[0] = (byte) b;
                    CapturingResponse.this.write(one, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    CapturingResponse.this.write(b, off, len);
                }

                @Override
                public void flush() throws IOException {
                    if (!capturing) {
                        getResponse().getOutputStream().flush();
                    }
                }
            };
        }
        return stream;
    }

    @Override
    public PrintWriter getWriter() {
        if (writer == null) {
            String encoding = getCharacterEncoding();
            Charset charset;
            try {
                charset = encoding == null ? StandardCharsets.ISO_8859_1 : Charset.forName(encoding);
            } catch (IllegalArgumentException e) {
                charset = StandardCharsets.ISO_8859_1;
            }
            // as a container does when a writer is taken: the charset becomes part of the content type
            setCharacterEncoding(charset.name());
            writer = new PrintWriter(new OutputStreamWriter(getOutputStream(), charset));
        }
        return writer;
    }

    @Override
    public void flushBuffer() throws IOException {
        if (writer != null) {
            writer.flush();
        }
        if (!capturing) {
            super.flushBuffer();
        }
    }

    @Override
    public void resetBuffer() {
        if (capturing) {
            if (writer != null) {
                writer.flush();
            }
            held.reset();
        } else {
            super.resetBuffer();
        }
    }

    @Override
    public void reset() {
        resetBuffer();
        super.reset();
    }

    @Override
    public boolean isCommitted() {
        return !capturing && super.isCommitted();
    }

    @Override
    public void sendError(int sc, String msg) throws IOException {
        discardAndAbandon();
        super.sendError(sc, msg);
    }

    @Override
    public void sendError(int sc) throws IOException {
        discardAndAbandon();
        super.sendError(sc);
    }

    /** A redirect is an ordinary, storable response: status 302 and a Location, no body. */
    @Override
    public void sendRedirect(String location) {
        if (!capturing) {
            throw new IllegalStateException("response already streaming");
        }
        resetBuffer();
        setStatus(SC_FOUND);
        setHeader("Location", location);
    }

    private void discardAndAbandon() throws IOException {
        if (capturing) {
            resetBuffer();
            abandon();
        }
    }
}
