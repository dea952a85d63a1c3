package dev.stagger.conformance;

import dev.stagger.http.RetryingHttpClient;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.util.function.UnaryOperator;

/**
 * One HTTP client as the suite drives it: a new client kind is one class implementing this, added
 * to {@link Clients#ALL}.
 */
public interface ClientUnderTest {

    /** The name the suite's reports show. */
    String name();

    /**
     * Opens the client with Stagger's rules: {@code rules} configures a builder this kind creates
     * ({@link RetryingHttpClient#builder()}, or {@code builder(HttpClient)} for the JDK client) on
     * {@code clock}, which an async client drives until its call completes.
     */
    Open open(VirtualClock clock, UnaryOperator<RetryingHttpClient.Builder> rules) throws Exception;

    /**
     * Whether the client hedges when the policy does (two attempts of one request in flight at
     * once, the loser cancelled); a client that does not runs a hedging policy's attempts one after
     * another.
     */
    default boolean hedges() {
        return false;
    }

    /** An open client. */
    interface Open extends AutoCloseable {

        /**
         * Sends one logical request and returns the answer the application sees: the final status
         * and body (a non-2xx status too, whether the client returns or throws it), or throws the
         * transport failure. Waits run on the rules' virtual clock.
         */
        Answer send(String method, URI uri, String body) throws Exception;

        /**
         * Connections the client holds for responses nobody will read, as its own pool counts
         * them; 0 for clients whose pool cannot be read (the suite checks the server side for all).
         */
        default int connectionsInUse() {
            return 0;
        }

        /** Releases what the client holds; nothing by default (the JDK kinds share one client). */
        @Override
        default void close() throws Exception {
        }
    }

    /** What the application received. */
    record Answer(int status, String body) {
    }
}
