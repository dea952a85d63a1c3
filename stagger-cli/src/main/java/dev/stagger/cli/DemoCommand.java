package dev.stagger.cli;

import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import java.io.IOException;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** A terminal showcase: a flaky call retried with backoff and jitter, each attempt and wait shown. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Show retries with exponential backoff and full jitter against a flaky operation.")
final class DemoCommand implements Callable<Integer> {

    @Option(names = "--failures", defaultValue = "3", description = "Failures before the operation succeeds (default ${DEFAULT-VALUE}).")
    int failures;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        out.println("A flaky operation that fails " + failures + " times, retried with RetryPolicy.interactive():");
        out.println("  5 attempts, 200 ms base x2, 5 s cap, full jitter, 15 s deadline");
        AtomicInteger calls = new AtomicInteger();
        Retry retry = Retry.of("demo", RetryPolicy.interactive()).withListener(new RetryListener() {
            @Override
            public void onAttemptFinished(RetryEvent.AttemptFinished e) {
                out.printf("  attempt %d: %s%n", e.attempt(), e.failed() ? "failed (" + e.failure().getMessage() + ")" : "ok");
            }

            @Override
            public void onRetryScheduled(RetryEvent.RetryScheduled e) {
                long cap = Math.min(5000, 200L << Math.min(20, e.nextAttempt() - 2));
                out.printf("    waiting %4d ms (full jitter drew it from [0, %d] ms)%n", e.delay().toMillis(), cap);
            }

            @Override
            public void onCallFinished(RetryEvent.CallFinished e) {
                out.printf("  => %s after %d attempts in %d ms%n", e.reason(), e.attempts(), e.elapsed().toMillis());
            }
        });
        try {
            retry.call(() -> {
                if (calls.incrementAndGet() <= failures) {
                    throw new IOException("HTTP 503 from the flaky service");
                }
                return "ok";
            });
        } catch (IOException gaveUp) {
            out.println("  gave up: " + gaveUp.getMessage());
        }
        return 0;
    }
}
