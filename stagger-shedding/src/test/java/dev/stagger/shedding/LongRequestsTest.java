package dev.stagger.shedding;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RandomSource;
import dev.stagger.shedding.support.VirtualServer;
import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The default {@link GradientLimit} with a few long requests (long polls, slow uploads) holding
 * slots while many short ones arrive, through the filter on a virtual clock: requests go async and
 * end when the clock reaches their end, so minutes of traffic run in a moment and the same way
 * every time. The long requests must not fill the limit and starve the short ones, at start or
 * when the minRTT is measured again (every 60 s or so).
 */
class LongRequestsTest {
    private final VirtualClock clock = new VirtualClock();
    private final LoadSheddingFilter filter = LoadSheddingFilter.builder("api").clock(clock)
            .random(RandomSource.seeded(7)).build();
    private final VirtualServer server = new VirtualServer(filter, clock);
    private final SplittableRandom random = new SplittableRandom(11);

    /** Short requests admitted and shed, per second of the run. */
    private int[] admitted;
    private int[] shed;

    @Test
    void threeLongPollsDoNotStarveTheShortRequestsOfANearlyIdleServer() {
        for (int i = 0; i < 3; i++) {
            longRequest(Duration.ofSeconds(30)); // each client polls again as soon as its poll ends
        }
        shortRequests(1_900, Duration.ofSeconds(90), Duration.ofMillis(10));
        clock.advance(Duration.ofSeconds(91));

        assertThat(sum(admitted)).as("short requests admitted of 1,900 (shed per second: %s)", perSecond())
                .isGreaterThanOrEqualTo(1_800);
    }

    @Test
    void eightSlowUploadsAtHalfCapacityDoNotStarveTheShortRequestsWhenTheMinRttIsMeasuredAgain() {
        for (int i = 0; i < 8; i++) {
            int client = i;
            clock.schedule(() -> longRequest(Duration.ofSeconds(20)), Duration.ofMillis(2_500L * client).toNanos());
        }
        // half of a server that serves 16 requests of 40 ms at once: 200 a second; 200 s hold three re-measures
        shortRequests(40_000, Duration.ofSeconds(200), Duration.ofMillis(40));
        clock.advance(Duration.ofSeconds(201));

        assertThat(sum(admitted)).as("short requests admitted of 40,000 (shed per second: %s)", perSecond())
                .isGreaterThanOrEqualTo(39_000);
        for (int second = 3; second < 200; second++) { // from start the limit grows from its floor: nothing served yet
            assertThat(shed[second]).as("short requests shed in second %d of %d sent (shed per second: %s)", second,
                    admitted[second] + shed[second], perSecond()).isLessThanOrEqualTo(admitted[second] / 10);
        }
    }

    /** A client that sends a request of {@code length}, again as soon as it ends, and 1 s later when it is shed. */
    private void longRequest(Duration length) {
        if (!server.send(length, () -> longRequest(length))) {
            clock.schedule(() -> longRequest(length), Duration.ofSeconds(1).toNanos());
        }
    }

    /** {@code count} requests of {@code length} at random moments (Poisson arrivals) over {@code over}. */
    private void shortRequests(int count, Duration over, Duration length) {
        int seconds = (int) over.toSeconds();
        admitted = new int[seconds + 1];
        shed = new int[seconds + 1];
        double meanGap = over.toNanos() / (double) count;
        double at = 0;
        for (int i = 0; i < count; i++) {
            at += -Math.log(1.0 - random.nextDouble()) * meanGap;
            if (at >= over.toNanos()) {
                at = random.nextDouble() * over.toNanos(); // the few that overshoot land anywhere in the run
            }
            long when = (long) at;
            clock.schedule(() -> {
                int second = (int) (clock.nanoTime() / 1_000_000_000L);
                if (server.send(length, () -> { })) {
                    admitted[second]++;
                } else {
                    shed[second]++;
                }
            }, when);
        }
    }

    private static int sum(int[] counts) {
        int sum = 0;
        for (int c : counts) {
            sum += c;
        }
        return sum;
    }

    private String perSecond() {
        StringBuilder b = new StringBuilder();
        for (int s = 0; s < shed.length; s++) {
            if (shed[s] > 0) {
                b.append(s).append(" s: ").append(shed[s]).append('/').append(shed[s] + admitted[s]).append("; ");
            }
        }
        return b.length() == 0 ? "none" : b.toString();
    }
}
