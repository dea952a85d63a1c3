package dev.stagger.jobs.internal;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** The error history stays bounded whatever a failure looks like. */
class ErrorTextTest {

    @Property(tries = 200)
    void messageAndStackStayWithinTheirBounds(@ForAll @IntRange(min = 0, max = 20_000) int messageLength,
                                              @ForAll @IntRange(min = 0, max = 400) int frames,
                                              @ForAll @IntRange(min = 0, max = 12) int causes) {
        Throwable failure = failure(messageLength, frames, causes);
        assertThat(ErrorText.message(failure).length()).isLessThanOrEqualTo(ErrorText.MAX_MESSAGE);
        String stack = ErrorText.stack(failure);
        assertThat(stack.length()).isLessThanOrEqualTo(ErrorText.MAX_STACK);
        assertThat(stack).startsWith(failure.getClass().getName());
    }

    @Property(tries = 50)
    void aShortFailureIsKeptWhole(@ForAll @IntRange(min = 1, max = 100) int messageLength) {
        Throwable failure = failure(messageLength, 3, 1);
        assertThat(ErrorText.message(failure)).isEqualTo(failure.getMessage());
        assertThat(ErrorText.stack(failure)).contains("\tat Frame.f2(Frame.java:2)").contains("Caused by: ");
    }

    private static Throwable failure(int messageLength, int frames, int causes) {
        Throwable cause = null;
        for (int i = 0; i < causes; i++) {
            cause = new IllegalStateException("cause " + i, cause);
        }
        RuntimeException e = new RuntimeException("m".repeat(messageLength), cause);
        StackTraceElement[] trace = new StackTraceElement[frames];
        for (int i = 0; i < frames; i++) {
            trace[i] = new StackTraceElement("Frame", "f" + i, "Frame.java", i);
        }
        e.setStackTrace(trace);
        return e;
    }
}
