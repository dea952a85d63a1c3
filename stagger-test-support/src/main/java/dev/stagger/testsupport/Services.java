package dev.stagger.testsupport;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a test does when a service it needs (a database, a broker, a browser, a binary) is absent:
 * locally it is skipped with a message saying how to provide the service; under {@code CI=true}
 * (set by {@code .ci/run}) it fails instead, so CI never passes by skipping. One wording everywhere:
 * the skip says {@code message}; the failure says {@code CI=true requires <service>: <message>}.
 */
public final class Services {
    private Services() {
    }

    /** Whether the build runs under CI ({@code CI=true}): a missing service fails rather than skips. */
    public static boolean ci() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /**
     * Returns if {@code available}; otherwise skips the test with {@code message}, or fails it under
     * {@code CI=true}.
     */
    public static void require(String service, boolean available, String message) {
        if (available) {
            return;
        }
        if (ci()) {
            fail("CI=true requires " + service + ": " + message);
        }
        assumeTrue(false, message);
    }

    /** Skips the test with {@code message}, or fails it under {@code CI=true}; never returns normally. */
    public static AssertionError unavailable(String service, String message) {
        require(service, false, message);
        throw new AssertionError("unreachable");
    }
}
