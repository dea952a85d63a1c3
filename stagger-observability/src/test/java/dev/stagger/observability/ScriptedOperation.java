package dev.stagger.observability;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A downstream that plays a script, one step per attempt; each step takes a set time on the
 * virtual clock, so attempt durations are exact. The last step repeats.
 */
final class ScriptedOperation implements Callable<Object> {
    private final VirtualClock clock;
    private final List<Step> steps = new ArrayList<>();
    private final AtomicInteger attempts = new AtomicInteger();

    private record Step(Duration took, Object result, Exception failure) {
    }

    private ScriptedOperation(VirtualClock clock) {
        this.clock = clock;
    }

    static ScriptedOperation on(VirtualClock clock) {
        return new ScriptedOperation(clock);
    }

    /** The next attempt throws an IOException after {@code took}. */
    ScriptedOperation fails(Duration took) {
        return fails(took, new IOException("connection reset"));
    }

    ScriptedOperation fails(Duration took, Exception failure) {
        steps.add(new Step(took, null, failure));
        return this;
    }

    /** The next attempt returns {@code result} after {@code took}. */
    ScriptedOperation returns(Duration took, Object result) {
        steps.add(new Step(took, result, null));
        return this;
    }

    ScriptedOperation succeeds(Duration took) {
        return returns(took, "ok");
    }

    int attempts() {
        return attempts.get();
    }

    @Override
    public Object call() throws Exception {
        int n = attempts.getAndIncrement();
        Step step = steps.get(Math.min(n, steps.size() - 1));
        clock.advance(step.took());
        if (step.failure() != null) {
            throw step.failure();
        }
        return step.result();
    }
}
