package dev.stagger.spring;

import dev.stagger.http.RetryingHttpClient;
import dev.stagger.spring.internal.AttemptSpans;
import dev.stagger.spring.internal.HttpClients;
import dev.stagger.spring.internal.InstanceFactory;
import dev.stagger.spring.internal.RetryingRequestInterceptor;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.http.client.ClientHttpRequestInterceptor;

/**
 * The named HTTP clients of {@code stagger.http.clients}, for Spring's blocking clients:
 *
 * <pre>{@code
 * RestClient orders = RestClient.builder()
 *         .baseUrl("https://orders.internal")
 *         .requestInterceptor(staggerHttp.interceptor("orders"))   // add it last
 *         .build();
 * }</pre>
 * Each request then follows {@link RetryingHttpClient}'s rules, with client {@code orders}'s
 * retry (policy, breaker, budget), status table and key mode: the same decisions, Retry-After
 * handling, {@code Idempotency-Key} and events as {@code RetryingHttpClient.send}. A retried
 * response is closed before the wait. The interceptor re-executes the request body it was given
 * (RestClient buffers it), so every attempt sends the same bytes. With an {@code ObservationRegistry}
 * (stagger-observability present, {@code stagger.observation.enabled} not false) each attempt is
 * its own client span, child of the Stagger attempt's, carrying its own {@code traceparent} and
 * {@code http.request.resend_count} after the first. The retry's {@code attempt-timeout} (shortened to
 * what is left of its deadline) ends an attempt that runs longer, whatever the request factory: the
 * attempt fails with an {@code AttemptTimeoutException}, its request is aborted where the factory
 * allows it, and its response is closed if it still comes. {@code WebClient}: see
 * {@link StaggerWebClient}.
 *
 * <p>A name that is not configured gets {@code stagger.http.clients.default}. Thread-safe.
 */
public final class StaggerHttp {
    private final InstanceFactory factory;
    private final StaggerRegistry registry;
    private final Map<String, RetryingHttpClient> clients = new ConcurrentHashMap<>();
    private final AttemptSpans spans;

    StaggerHttp(InstanceFactory factory, StaggerRegistry registry, Iterable<String> configured, AttemptSpans spans) {
        this.factory = factory;
        this.registry = registry;
        this.spans = spans;
        for (String name : configured) {
            if (!StaggerProperties.DEFAULT.equals(name)) {
                client(name);
            }
        }
    }

    /** The rules of client {@code name} (a client without a JDK {@code HttpClient}). */
    public RetryingHttpClient client(String name) {
        RetryingHttpClient c = clients.get(name);
        return c != null ? c : clients.computeIfAbsent(name, n -> HttpClients.build(factory, registry, n));
    }

    /** Every client built so far, by name. */
    public Map<String, RetryingHttpClient> clients() {
        return Map.copyOf(clients);
    }

    /** An interceptor for {@code RestClient} and {@code RestTemplate} applying client {@code name}'s retries. */
    public ClientHttpRequestInterceptor interceptor(String name) {
        return new RetryingRequestInterceptor(client(name), spans, factory.clock());
    }

    /** What makes each attempt its own client span ({@link AttemptSpans#NONE} without an observation registry). */
    AttemptSpans spans() {
        return spans;
    }

    @Override
    public String toString() {
        return "StaggerHttp{" + clients.keySet() + "}";
    }
}
