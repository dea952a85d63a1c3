package dev.stagger.spring.internal;

import dev.stagger.Retry;
import dev.stagger.RetryListener;
import dev.stagger.http.IdempotencyKeyMode;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.StatusTable;
import dev.stagger.spring.StaggerProperties.HttpClientProperties;
import dev.stagger.spring.StaggerRegistry;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.springframework.util.ClassUtils;

/**
 * Builds the named HTTP clients of {@code stagger.http.clients}: a {@link RetryingHttpClient}
 * without a JDK client, whose rules Spring's clients apply through an interceptor or a filter.
 * Loaded only when stagger-http is present.
 */
public final class HttpClients {
    private static final String PREFIX = "stagger.http.clients";
    private static final boolean SPRING_WEB = ClassUtils.isPresent(
            "org.springframework.http.client.ClientHttpResponse", HttpClients.class.getClassLoader());
    private static final boolean LOG = ClassUtils.isPresent(
            "dev.stagger.observability.HttpRetryLog", HttpClients.class.getClassLoader());

    private HttpClients() {
    }

    /** The client's settings, on top of {@code stagger.http.clients.default}. */
    static HttpClientProperties properties(InstanceFactory factory, String name) {
        return factory.merged(PREFIX, name, HttpClientProperties::new);
    }

    /** The retry a client uses: its {@code retry}, else the retry of its own name (or the default). */
    static String retryName(String name, HttpClientProperties p) {
        return p.getRetry() != null ? p.getRetry() : name;
    }

    /** The status table of client {@code name}. */
    static StatusTable statusTable(String name, HttpClientProperties p) {
        StatusTable table = StatusTable.defaults();
        String at = InstanceFactory.key(PREFIX, name) + ".";
        if (p.getRetryStatuses() != null) {
            table = replace(table, StatusTable.Rule.RETRY, p.getRetryStatuses(), at + "retry-statuses");
        }
        if (p.getRetryIfIdempotentStatuses() != null) {
            table = replace(table, StatusTable.Rule.RETRY_IF_IDEMPOTENT, p.getRetryIfIdempotentStatuses(),
                    at + "retry-if-idempotent-statuses");
        }
        return table;
    }

    private static StatusTable replace(StatusTable table, StatusTable.Rule rule, List<Integer> statuses, String property) {
        StatusTable t = table;
        for (int s = 400; s <= 599; s++) {
            if (t.rule(s) == rule) {
                t = t.withNever(s);
            }
        }
        StatusTable[] result = {t};
        // the list is what a refusal shows (an int[] would print as its identity)
        PropertyCheck.apply(property, statuses, list -> {
            int[] codes = list.stream().mapToInt(Integer::intValue).toArray();
            result[0] = rule == StatusTable.Rule.RETRY ? result[0].withRetry(codes) : result[0].withRetryIfIdempotent(codes);
        });
        return result[0];
    }

    /** Client {@code name}, built from its properties and its retry's policy, breaker and budget. */
    public static RetryingHttpClient build(InstanceFactory factory, StaggerRegistry registry, String name) {
        HttpClientProperties p = properties(factory, name);
        String at = InstanceFactory.key(PREFIX, name) + ".";
        Retry retry = registry.bareRetry(retryName(name, p));
        StatusTable table = statusTable(name, p);
        RetryingHttpClient.Builder b = RetryingHttpClient.builder()
                .service(name)
                .policy(retry.policy())
                .clock(retry.clock())
                .statusTable(table);
        retry.circuitBreaker().ifPresent(breaker -> {
            b.circuitBreaker(breaker);
            // the breaker counts the statuses this client retries, whether the client is listed or not
            factory.breakerFailures().add(breaker.name(),
                    SPRING_WEB ? SpringHttpTransports.breakerFailures(table) : table.failures());
        });
        retry.budget().ifPresentOrElse(b::budget, b::withoutBudget);
        retry.throttle().ifPresent(b::throttle);
        if (p.getIdempotencyKeys() != null) {
            IdempotencyKeyMode mode;
            try {
                mode = IdempotencyKeyMode.valueOf(p.getIdempotencyKeys().trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw PropertyCheck.invalid(at + "idempotency-keys", p.getIdempotencyKeys(),
                        "idempotency-keys must be auto, require or off");
            }
            b.idempotencyKeys(mode);
        }
        if (p.getKeysHonoured() != null) {
            boolean honoured = p.getKeysHonoured();
            b.keysHonoured(uri -> honoured);
        }
        if (p.getHedgeIdempotentWrites() != null) {
            b.hedgeIdempotentWrites(p.getHedgeIdempotentWrites());
        }
        PropertyCheck.apply(at + "max-retry-after", p.getMaxRetryAfter(), b::maxRetryAfter);
        if (p.getUntrustedHosts() != null) {
            Set<String> untrusted = new HashSet<>();
            for (String host : p.getUntrustedHosts()) {
                if (host == null || host.isBlank()) {
                    throw PropertyCheck.invalid(at + "untrusted-hosts", p.getUntrustedHosts(), "untrusted-hosts must not hold a blank host");
                }
                untrusted.add(host.trim().toLowerCase(Locale.ROOT));
            }
            b.signalsTrusted(uri -> uri.getHost() == null || !untrusted.contains(uri.getHost().toLowerCase(Locale.ROOT)));
        }
        // the listeners the application's customizers give a retry of this name (meters, logs, counts)
        boolean httpLog = false;
        for (RetryListener l : registry.customize(Retry.of(name, retry.policy())).listeners()) {
            if (LOG && Logs.isRetryLog(l)) {
                httpLog = true; // written as http_retry lines below instead
            } else {
                b.listener(l);
            }
        }
        if (httpLog) {
            Logs.addHttpLog(b);
        }
        return b.build();
    }
}
