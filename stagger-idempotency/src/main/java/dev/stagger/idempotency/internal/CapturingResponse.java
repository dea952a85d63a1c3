package dev.stagger.idempotency.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Writer;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Holds the body back in memory so it can be stored before it is sent. Status and headers go
 * straight to the wrapped response (nothing is committed until the body is released). When the
 * body outgrows the limit, or the handler sends an error or goes async, capture is abandoned:
 * what was held is written out and the rest streams through, and the response is not stored.
 *
 * <p>A handler that takes the writer gets one whose charset the container has fixed: the
 * container's own {@code getWriter()} is called at that moment, so a content type or character
 * encoding set afterwards is treated exactly as the container treats it without this wrapper
 * (the Servlet rule: once the writer is out, the charset no longer changes). Characters are held
 * as characters and sent through the container's writer; the stored body is their encoding in
 * that charset. Not thread-safe, like the response it wraps.
 */
public final class CapturingResponse extends HttpServletResponseWrapper {
    private final int limit;
    private final ByteArrayOutputStream held = new ByteArrayOutputStream();
    private final StringBuilder heldChars = new StringBuilder();
    private boolean capturing = true;
    private boolean abandoned;
    /** Made on first use of {@code getOutputStream}, or {@code getWriter} with its charset. */
    private @Nullable ServletOutputStream stream;
    private @Nullable PrintWriter writer;
    private @Nullable Charset writerCharset;

    public CapturingResponse(HttpServletResponse response, int limit) {
        super(response);
        this.limit = limit;
    }

    /** True when the response cannot be stored (too large, error sent, async). */
    public boolean abandoned() {
        return abandoned;
    }

    /** The captured body: the bytes written, or the characters written encoded in the writer's charset. */
    public byte[] body() {
        if (writer == null) {
            return held.toByteArray();
        }
        writer.flush();
        return heldChars.toString().getBytes(writerCharset);
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
        sendHeld();
    }

    /**
     * Sends the captured body for real. A body written as bytes gets a Content-Length; one written
     * through the writer is left to the container, which counts what its writer encodes.
     */
    public void release() throws IOException {
        if (writer != null) {
            writer.flush();
        }
        capturing = false;
        HttpServletResponse response = (HttpServletResponse) getResponse();
        if (writer == null && !response.isCommitted()) {
            response.setContentLength(held.size());
        }
        sendHeld();
    }

    private void sendHeld() throws IOException {
        if (writer != null) {
            if (heldChars.length() > 0) {
                getResponse().getWriter().append(heldChars);
                heldChars.setLength(0);
            }
        } else if (held.size() > 0) {
            held.writeTo(getResponse().getOutputStream());
            held.reset();
        }
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

    /** Every character encodes to at least one byte, so more characters than the limit is over it. */
    private void write(char[] c, int off, int len) throws IOException {
        if (capturing && heldChars.length() + (long) len > limit) {
            abandon();
        }
        if (capturing) {
            heldChars.append(c, off, len);
        } else {
            getResponse().getWriter().write(c, off, len);
        }
    }

    @Override
    public ServletOutputStream getOutputStream() {
        if (writer != null) {
            throw new IllegalStateException("getWriter() has already been called for this response");
        }
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
    public PrintWriter getWriter() throws IOException {
        if (stream != null) {
            throw new IllegalStateException("getOutputStream() has already been called for this response");
        }
        if (writer == null) {
            // the container fixes the charset now (and adds it to the content type), as it would unwrapped
            getResponse().getWriter();
            writerCharset = charset(getResponse().getCharacterEncoding());
            writer = new PrintWriter(new Writer() {
                @Override
                public void write(char[] c, int off, int len) throws IOException {
                    CapturingResponse.this.write(c, off, len);
                }

                @Override
                public void flush() throws IOException {
                    if (!capturing) {
                        getResponse().getWriter().flush();
                    }
                }

                @Override
                public void close() throws IOException {
                    flush();
                }
            });
        }
        return writer;
    }

    private static Charset charset(String encoding) {
        try {
            return encoding == null ? StandardCharsets.ISO_8859_1 : Charset.forName(encoding);
        } catch (IllegalArgumentException e) {
            return StandardCharsets.ISO_8859_1;
        }
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
            heldChars.setLength(0);
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
