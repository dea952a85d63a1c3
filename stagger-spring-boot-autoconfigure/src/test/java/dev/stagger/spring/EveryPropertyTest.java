package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.jayway.jsonpath.JsonPath;
import dev.stagger.CircuitBreaker;
import dev.stagger.ExponentialBackoff;
import dev.stagger.Jitter;
import dev.stagger.LinearBackoff;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.http.HttpTransport;
import dev.stagger.http.IdempotencyKeyMode;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.StatusTable;
import dev.stagger.http.servlet.DeadlineFilter;
import dev.stagger.idempotency.IdempotencyStore;
import dev.stagger.idempotency.InMemoryIdempotencyStore;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.servlet.IdempotencyFilter;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jobs.JobContext;
import dev.stagger.observability.CallerContext;
import dev.stagger.observability.RetryLog;
import dev.stagger.observability.RetryMetrics;
import dev.stagger.observability.RetryObservation;
import dev.stagger.testing.VirtualClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * Every {@code stagger.*} property, one by one: set to a value other than its default, it shows in
 * what the starter built (a getter, the behaviour it changes, or the refusal of the Stagger
 * builder it was handed to), and the same check fails without it. The list of properties is
 * taken from the generated IDE metadata, with the entries of each map of named instances expanded
 * from their classes, so a property added without a case here fails
 * {@link #everyPropertyOfTheMetadataHasACase()}.
 */
class EveryPropertyTest {
    private static final AutoConfigurations ALL = AutoConfigurations.of(StaggerAutoConfiguration.class,
            StaggerHttpAutoConfiguration.class, StaggerTransactionAutoConfiguration.class,
            StaggerObservabilityAutoConfiguration.class, StaggerActuatorAutoConfiguration.class,
            StaggerIdempotencyAutoConfiguration.class, StaggerJobsAutoConfiguration.class,
            StaggerSpringRetryAutoConfiguration.class, StaggerHttpServerAutoConfiguration.class);
    private static final Pattern NAMED_ENTRY = Pattern.compile(
            "^(stagger\\.(?:retries|circuit-breakers|budgets|throttles|hedges|bulkheads|http\\.clients|jobs\\.pools))\\.[^.]+(\\..+)$");

    @TempDir
    Path dir;
    private final AtomicInteger databases = new AtomicInteger();

    /** What a property's value must change; throws when it did not. */
    @FunctionalInterface
    interface Check {
        void verify(ApplicationContextAssertProvider<? extends ApplicationContext> context) throws Exception;
    }

    /** One property, the value it is set to, the properties it needs beside it, and its check. */
    record Case(String property, String value, List<String> with, Check check) {
        /** The property as the metadata names it: a map entry's name is {@code <name>}. */
        String template() {
            Matcher m = NAMED_ENTRY.matcher(property);
            return m.matches() ? m.group(1) + ".<name>" + m.group(2) : property;
        }

        @Override
        public String toString() {
            return property + "=" + value;
        }
    }

    private static Case set(String property, String value, Check check, String... with) {
        return new Case(property, value, List.of(with), check);
    }

    /** A job handler, so a job pool has something to run. */
    static class Mailer {
        @StaggerJobHandler(queue = "mail", type = "receipt")
        public void send(JobContext job) {
        }
    }

    /** A {@code @StaggerRetry} method (default name), always failing. */
    static class Writer {
        private final AtomicInteger calls = new AtomicInteger();

        @StaggerRetry
        public void write() {
            calls.incrementAndGet();
            throw new IllegalStateException("down");
        }

        public int calls() {
            return calls.get();
        }
    }

    /** A {@code @StaggerRetry} naming a retry configured nowhere. */
    static class Unlisted {
        @StaggerRetry("unlisted")
        public void call() {
        }
    }

    /** A method with Spring Framework's own {@code @Retryable}, always failing. */
    static class Reader {
        private final AtomicInteger calls = new AtomicInteger();

        @org.springframework.resilience.annotation.Retryable
        public String read() {
            calls.incrementAndGet();
            throw new IllegalStateException("down");
        }

        public int calls() {
            return calls.get();
        }
    }

    /** A registry that observes (a handler taking every context): one without a handler is a no-op, which RetryObservation leaves alone. */
    private static ObservationRegistry observationRegistry() {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(context -> true);
        return registry;
    }

    private WebApplicationContextRunner runner() {
        DataSource ds = SqliteDataSource.file(dir.resolve("db-" + databases.incrementAndGet() + ".db"));
        return new WebApplicationContextRunner().withConfiguration(ALL)
                .withBean(VirtualClock.class, VirtualClock::new)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(ObservationRegistry.class, EveryPropertyTest::observationRegistry)
                .withBean(DataSource.class, () -> ds)
                .withBean(PlatformTransactionManager.class, () -> new DataSourceTransactionManager(ds))
                .withBean(Mailer.class, Mailer::new)
                .withBean(Writer.class, Writer::new)
                .withBean(Reader.class, Reader::new);
    }

    // ---- reading what was built ----

    private static ApplicationContext started(ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        assertThat(context.getStartupFailure()).as("startup failure").isNull();
        return context;
    }

    private static Retry retry(ApplicationContextAssertProvider<? extends ApplicationContext> context, String name) {
        return started(context).getBean(StaggerRegistry.class).retry(name);
    }

    private static dev.stagger.HedgePolicy hedge(ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return started(context).getBean(StaggerRegistry.class).hedge("fast");
    }

    private static dev.stagger.Bulkhead bulkhead(ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return started(context).getBean(StaggerRegistry.class).bulkhead("pool");
    }

    private static RetryPolicy orders(ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return retry(context, "orders").policy();
    }

    private static ExponentialBackoff exponential(ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return (ExponentialBackoff) orders(context).backoff();
    }

    private static CircuitBreaker breaker(ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return started(context).getBean(StaggerRegistry.class).circuitBreaker("downstream");
    }

    private static VirtualClock clock(ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return context.getBean(VirtualClock.class);
    }

    private static RetryingHttpClient payments(ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return started(context).getBean(StaggerHttp.class).client("payments");
    }

    @SuppressWarnings("unchecked")
    private static FilterRegistrationBean<IdempotencyFilter> filter(
            ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return started(context).getBean("staggerIdempotencyFilter", FilterRegistrationBean.class);
    }

    @SuppressWarnings("unchecked")
    private static FilterRegistrationBean<DeadlineFilter> deadlineFilter(
            ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return started(context).getBean("staggerDeadlineFilter", FilterRegistrationBean.class);
    }

    /** Runs a request from 127.0.0.1 with a deadline header the filter refuses; returns how many it counted. */
    private static long refusedDeadlinesCounted(ApplicationContextAssertProvider<? extends ApplicationContext> context)
            throws Exception {
        DeadlineFilter filter = deadlineFilter(context).getFilter();
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/orders");
        request.setRemoteAddr("127.0.0.1");
        request.addHeader("Stagger-Deadline-Ms", "soon");
        filter.doFilter(request, new MockHttpServletResponse(), new MockFilterChain());
        return filter.rejectedDeadlines();
    }

    private static String health(ApplicationContextAssertProvider<? extends ApplicationContext> context) {
        return started(context).getBean(StaggerHealthIndicator.class).health().getStatus().getCode();
    }

    /** Attempts a retry makes at a call that always throws {@code failure}. */
    private static int attempts(Retry retry, Exception failure) {
        AtomicInteger calls = new AtomicInteger();
        try {
            retry.call(() -> {
                calls.incrementAndGet();
                throw failure;
            });
        } catch (Exception expected) {
            // gave up
        }
        return calls.get();
    }

    private static void fail(CircuitBreaker breaker) {
        try {
            breaker.call(() -> {
                throw new IOException("down");
            });
        } catch (Exception expected) {
            // recorded as a failure
        }
    }

    private static void failWith(CircuitBreaker breaker, Exception failure) {
        try {
            breaker.call(() -> {
                throw failure;
            });
        } catch (Exception expected) {
            // recorded as the breaker's properties say
        }
    }

    private static void succeed(CircuitBreaker breaker) throws Exception {
        breaker.call(() -> "ok");
    }

    /**
     * Startup stopped by the Stagger builder that refused the value, naming the property and the
     * value as bound ({@code shown}: a duration in ISO form).
     */
    private static Check refused(String property, String shown) {
        return context -> {
            assertThat(context.getStartupFailure()).as("startup failure").isNotNull();
            assertThat(messages(context.getStartupFailure())).contains("Property " + property + " with value '" + shown + "'");
        };
    }

    /** The messages of a failure and its causes. */
    static String messages(Throwable failure) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }

    /** Sends a POST through the registered idempotency filter; whether it reached the application. */
    private static boolean passesTheFilter(ApplicationContextAssertProvider<? extends ApplicationContext> context,
                                           Map<String, String> headers) throws Exception {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
        request.setContentType("application/json");
        request.setContent("{}".getBytes(StandardCharsets.UTF_8));
        headers.forEach(request::addHeader);
        MockHttpServletResponse response = new MockHttpServletResponse();
        MockFilterChain chain = new MockFilterChain();
        filter(context).getFilter().doFilter(request, response, chain);
        return chain.getRequest() != null;
    }

    // ---- every property ----

    private static final String R = "stagger.retries.orders.";
    private static final String B = "stagger.circuit-breakers.downstream.";
    private static final String H = "stagger.http.clients.payments.";
    private static final String I = "stagger.idempotency.";
    private static final String D = "stagger.http.server.deadline.";
    private static final String J = "stagger.jobs.";
    private static final String ENABLED = "stagger.idempotency.enabled=true";
    private static final String MEMORY = "stagger.idempotency.store=memory";
    private static final String JOBS = "stagger.jobs.enabled=true";
    private static final String ONE_FAILURE_OPENS = B + "consecutive-failures=1";

    /** A response that is a status code, with Stagger-No-Retry on a 503. */
    private static final HttpTransport<Integer> NO_RETRY_ON_503 = headerOn503("Stagger-No-Retry", "gave-up");

    /** A response that is a status code, with Retry-After: 60 on a 503. */
    private static final HttpTransport<Integer> RETRY_AFTER_A_MINUTE = headerOn503("Retry-After", "60");

    /** Responses that are status codes; a 503 carries one header. */
    private static HttpTransport<Integer> headerOn503(String header, String value) {
        return new HttpTransport<>() {
            @Override
            public int statusCode(Integer response) {
                return response;
            }

            @Override
            public Optional<String> header(Integer response, String name) {
                return response == 503 && header.equalsIgnoreCase(name) ? Optional.of(value) : Optional.empty();
            }

            @Override
            public void discard(Integer response) {
            }
        };
    }

    static final List<Case> CASES = List.of(
            // retries
            set(R + "preset", "background", c -> {
                assertThat(orders(c).maxAttempts()).isEqualTo(RetryPolicy.background().maxAttempts());
                assertThat(orders(c).deadline()).isEqualTo(RetryPolicy.background().deadline());
            }),
            set(R + "max-attempts", "7", c -> assertThat(orders(c).maxAttempts()).isEqualTo(7)),
            set(R + "backoff.type", "linear", c -> assertThat(orders(c).backoff()).isInstanceOf(LinearBackoff.class)),
            set(R + "backoff.base", "300ms", c -> assertThat(exponential(c).base()).isEqualTo(Duration.ofMillis(300))),
            set(R + "backoff.multiplier", "3", c -> assertThat(exponential(c).multiplier()).isEqualTo(3.0)),
            set(R + "backoff.step", "250ms", c -> assertThat(orders(c).backoff().toString()).contains("step=PT0.25S"),
                    R + "backoff.type=linear"),
            set(R + "backoff.max-delay", "7s", c -> assertThat(exponential(c).maxDelay()).isEqualTo(Duration.ofSeconds(7))),
            set(R + "backoff.jitter", "equal", c -> assertThat(exponential(c).jitter()).isSameAs(Jitter.equal())),
            set(R + "backoff.jitter-factor", "0.4", c -> assertThat(exponential(c).jitter()).hasToString("spread(0.4)"),
                    R + "backoff.jitter=spread"),
            set(R + "deadline", "42s", c -> assertThat(orders(c).deadline()).contains(Duration.ofSeconds(42))),
            set(R + "attempt-timeout", "3s", c -> assertThat(orders(c).attemptTimeout()).contains(Duration.ofSeconds(3))),
            set(R + "retry-on", "java.io.IOException", c -> {
                assertThat(attempts(retry(c, "orders"), new IllegalStateException("not listed"))).isEqualTo(1);
                assertThat(attempts(retry(c, "orders"), new IOException("listed"))).isEqualTo(2);
            }, R + "max-attempts=2", R + "backoff.type=none"),
            set(R + "abort-on", "java.lang.IllegalStateException", c -> {
                assertThat(attempts(retry(c, "orders"), new IllegalStateException("aborts"))).isEqualTo(1);
                assertThat(attempts(retry(c, "orders"), new IOException("retried"))).isEqualTo(2);
            }, R + "max-attempts=2", R + "backoff.type=none"),
            set(R + "circuit-breaker", "guard", c -> assertThat(retry(c, "orders").circuitBreaker().orElseThrow().name()).isEqualTo("guard"),
                    "stagger.circuit-breakers.guard.consecutive-failures=5"),
            set(R + "budget", "shared", c -> assertThat(retry(c, "orders").budget().orElseThrow().name()).isEqualTo("shared"),
                    "stagger.budgets.shared.ratio=0.2"),
            set(R + "throttle", "gentle", c -> assertThat(retry(c, "orders").throttle().orElseThrow().k()).isEqualTo(3.0),
                    "stagger.throttles.gentle.k=3"),
            set(R + "hedge", "fast", c -> assertThat(retry(c, "orders").policy().hedge())
                            .containsSame(started(c).getBean(StaggerRegistry.class).hedge("fast")),
                    "stagger.hedges.fast.delay=40ms"),
            set(R + "bulkhead", "pool", c -> assertThat(retry(c, "orders").bulkhead().orElseThrow().maxConcurrent()).isEqualTo(7),
                    "stagger.bulkheads.pool.max-concurrent=7"),
            set(R + "nesting", "retry-again", c -> assertThat(retry(c, "orders").nesting()).isEqualTo(dev.stagger.Nesting.RETRY_AGAIN)),
            // circuit breakers, by what they do
            set(B + "failure-rate-threshold", "0.2", c -> {
                CircuitBreaker breaker = breaker(c);
                for (int i = 0; i < 3; i++) {
                    succeed(breaker);
                }
                fail(breaker); // 1 failure in 4 calls: 25 %
                assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
            }, B + "minimum-calls=4"),
            set(B + "minimum-calls", "2", c -> {
                CircuitBreaker breaker = breaker(c);
                fail(breaker);
                fail(breaker);
                assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
            }),
            set(B + "consecutive-failures", "3", c -> {
                CircuitBreaker breaker = breaker(c);
                fail(breaker);
                fail(breaker);
                assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
                fail(breaker);
                assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
            }),
            set(B + "window", "2s", c -> {
                CircuitBreaker breaker = breaker(c);
                fail(breaker);
                clock(c).advance(Duration.ofSeconds(10)); // the first failure has left a 2 s window, not a 30 s one
                fail(breaker);
                assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
                assertThat(breaker.metrics().failures()).isPositive(); // it did count the calls
            }, B + "minimum-calls=2"),
            set(B + "open-duration", "5s", c -> {
                CircuitBreaker breaker = breaker(c);
                fail(breaker);
                assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
                clock(c).advance(Duration.ofSeconds(6));
                succeed(breaker); // the probe is let through (30 s by default: refused)
            }, ONE_FAILURE_OPENS),
            set(B + "half-open-permits", "3", c -> {
                CircuitBreaker breaker = breaker(c);
                fail(breaker);
                clock(c).advance(Duration.ofSeconds(2));
                assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
                assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
            }, ONE_FAILURE_OPENS, B + "open-duration=1s"),
            set(B + "slow-call-threshold", "1s", c -> {
                CircuitBreaker breaker = breaker(c);
                breaker.record(breaker.tryAcquirePermission(), "ok", null, Duration.ofSeconds(2));
                assertThat(breaker.metrics().slowCalls()).isEqualTo(1);
            }),
            set(B + "record-exceptions", "java.io.IOException", c -> {
                CircuitBreaker breaker = breaker(c);
                failWith(breaker, new IllegalStateException("not listed: a success"));
                assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
                fail(breaker);
                assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
            }, ONE_FAILURE_OPENS),
            set(B + "ignore-exceptions", "java.lang.IllegalStateException", c -> {
                CircuitBreaker breaker = breaker(c);
                fail(breaker);
                failWith(breaker, new IllegalStateException("ignored"));
                assertThat(breaker.state()).as("not a failure").isEqualTo(CircuitBreaker.State.CLOSED);
                fail(breaker);
                assertThat(breaker.state()).as("nor a success ending the streak").isEqualTo(CircuitBreaker.State.OPEN);
            }, B + "consecutive-failures=2"),
            // the events endpoint
            set("stagger.events.size", "2", c -> {
                Retry orders = retry(c, "orders");
                attempts(orders, new IllegalStateException("down")); // attempt, retry, attempt, give-up
                List<Map<String, Object>> kept = started(c).getBean(dev.stagger.spring.internal.EventLog.class).recent("orders", null);
                assertThat(kept).extracting(e -> e.get("type")).containsExactly("give-up", "attempt");
            }, "management.endpoints.web.exposure.include=staggerevents", R + "max-attempts=2", R + "backoff.type=none"),
            // budgets and throttles
            set("stagger.budgets.shared.ratio", "0.25",
                    c -> assertThat(started(c).getBean(StaggerRegistry.class).budget("shared").ratio()).isEqualTo(0.25)),
            set("stagger.budgets.shared.max-tokens", "50",
                    c -> assertThat(started(c).getBean(StaggerRegistry.class).budget("shared").maxTokens()).isEqualTo(50.0)),
            set("stagger.budgets.shared.min-retries-per-second", "3",
                    c -> assertThat(started(c).getBean(StaggerRegistry.class).budget("shared").minRetriesPerSecond()).isEqualTo(3.0)),
            set("stagger.throttles.gentle.k", "3",
                    c -> assertThat(started(c).getBean(StaggerRegistry.class).throttle("gentle").k()).isEqualTo(3.0)),
            set("stagger.throttles.gentle.window", "1m",
                    c -> assertThat(started(c).getBean(StaggerRegistry.class).throttle("gentle").window()).isEqualTo(Duration.ofMinutes(1))),
            set("stagger.throttles.gentle.buckets", "12",
                    c -> assertThat(started(c).getBean(StaggerRegistry.class).throttle("gentle").buckets()).isEqualTo(12)),
            // bulkheads
            set("stagger.bulkheads.pool.max-concurrent", "7",
                    c -> assertThat(bulkhead(c).limit()).isEqualTo(7)),
            set("stagger.bulkheads.pool.min-concurrent", "3",
                    c -> assertThat(bulkhead(c).minConcurrent()).isEqualTo(3), "stagger.bulkheads.pool.latency-threshold=1s"),
            set("stagger.bulkheads.pool.max-wait", "50ms",
                    c -> assertThat(bulkhead(c).maxWait()).isEqualTo(Duration.ofMillis(50))),
            set("stagger.bulkheads.pool.latency-threshold", "300ms", c -> {
                assertThat(bulkhead(c).isAdaptive()).isTrue();
                assertThat(bulkhead(c).latencyThreshold()).hasValue(Duration.ofMillis(300));
            }),
            // hedges
            set("stagger.hedges.fast.delay", "40ms",
                    c -> assertThat(hedge(c).delay()).isEqualTo(Duration.ofMillis(40))),
            set("stagger.hedges.fast.percentile", "95",
                    c -> assertThat(hedge(c).percentile()).hasValue(95.0), "stagger.hedges.fast.delay=40ms"),
            set("stagger.hedges.fast.floor", "5ms",
                    c -> assertThat(hedge(c).floor()).isEqualTo(Duration.ofMillis(5)), "stagger.hedges.fast.delay=40ms"),
            set("stagger.hedges.fast.warmup", "7",
                    c -> assertThat(hedge(c).warmup()).isEqualTo(7), "stagger.hedges.fast.delay=40ms"),
            set("stagger.hedges.fast.window", "1m",
                    c -> assertThat(hedge(c).window()).isEqualTo(Duration.ofMinutes(1)), "stagger.hedges.fast.delay=40ms"),
            set("stagger.hedges.fast.max-hedges", "2",
                    c -> assertThat(hedge(c).maxHedges()).isEqualTo(2), "stagger.hedges.fast.delay=40ms"),
            set("stagger.hedges.fast.max-slow-share", "0.3",
                    c -> assertThat(hedge(c).maxSlowShare()).hasValue(0.3), "stagger.hedges.fast.delay=40ms"),
            // the annotation
            set("stagger.annotation.order", "5",
                    c -> assertThat(started(c).getBean("staggerRetryAdvisor", Ordered.class).getOrder()).isEqualTo(5)),
            set("stagger.annotation.inside-transaction", "once", c -> {
                Writer writer = started(c).getBean(Writer.class);
                org.springframework.transaction.support.TransactionTemplate transaction =
                        new org.springframework.transaction.support.TransactionTemplate(c.getBean(PlatformTransactionManager.class));
                assertThatThrownBy(() -> transaction.executeWithoutResult(status -> writer.write())).hasMessage("down");
                assertThat(writer.calls()).isEqualTo(1); // once, no retry inside the transaction
            }),
            set("stagger.annotation.allow-unconfigured-names", "true", c -> started(c)
                    .getBean("staggerRetryNameCheck", org.springframework.beans.factory.config.BeanPostProcessor.class)
                    .postProcessBeforeInitialization(new Unlisted(), "unlisted")),
            // HTTP clients
            set(H + "retry", "orders", c -> assertThat(payments(c).policy().maxAttempts()).isEqualTo(9), R + "max-attempts=9"),
            set(H + "retry-statuses", "418", c -> {
                assertThat(payments(c).statusTable().rule(418)).isEqualTo(StatusTable.Rule.RETRY);
                assertThat(payments(c).statusTable().rule(503)).isNotEqualTo(StatusTable.Rule.RETRY); // replaced, not added
            }),
            set(H + "retry-if-idempotent-statuses", "599", c -> {
                assertThat(payments(c).statusTable().rule(599)).isEqualTo(StatusTable.Rule.RETRY_IF_IDEMPOTENT);
                assertThat(payments(c).statusTable().rule(500)).isNotEqualTo(StatusTable.Rule.RETRY_IF_IDEMPOTENT);
            }),
            set(H + "idempotency-keys", "off", c -> assertThat(payments(c).idempotencyKeyMode()).isEqualTo(IdempotencyKeyMode.OFF)),
            set(H + "keys-honoured", "true", c -> assertThat(payments(c)
                    .exchange("POST", URI.create("http://127.0.0.1/charges"), header -> Optional.empty()).safe()).isTrue()),
            set(H + "hedge-idempotent-writes", "true", c -> assertThat(payments(c).hedgesIdempotentWrites()).isTrue()),
            set(H + "max-retry-after", "9s", c -> {
                RetryingHttpClient client = payments(c);
                VirtualClock clock = clock(c);
                int before = clock.sleeps().size();
                AtomicInteger sent = new AtomicInteger();
                Integer status = client.execute(client.exchange("GET", URI.create("http://127.0.0.1/quotes"), h -> Optional.empty()),
                        RETRY_AFTER_A_MINUTE, attempt -> sent.incrementAndGet() == 1 ? 503 : 200);
                assertThat(status).isEqualTo(200);
                List<Duration> waits = clock.sleeps().subList(before, clock.sleeps().size());
                assertThat(waits).singleElement().satisfies(wait ->
                        assertThat(wait).isGreaterThanOrEqualTo(Duration.ofSeconds(9)).isLessThan(Duration.ofSeconds(60)));
            }),
            set(H + "untrusted-hosts", "127.0.0.1", c -> {
                RetryingHttpClient client = payments(c);
                AtomicInteger sent = new AtomicInteger();
                Integer status = client.execute(client.exchange("GET", URI.create("http://127.0.0.1/quotes"), h -> Optional.empty()),
                        NO_RETRY_ON_503, attempt -> sent.incrementAndGet() == 1 ? 503 : 200);
                assertThat(status).as("the 503 retried despite its Stagger-No-Retry").isEqualTo(200);
            }),
            // the deadline filter
            set(D + "enabled", "false", c -> assertThat(started(c).containsBean("staggerDeadlineFilter")).isFalse()),
            set(D + "max", "2s", c -> assertThat(deadlineFilter(c).getFilter().maxDeadline()).isEqualTo(Duration.ofSeconds(2))),
            set(D + "trusted-addresses", "10.0.0.1", c -> assertThat(refusedDeadlinesCounted(c)).as("header of 127.0.0.1 read").isZero()),
            set(D + "order", "7", c -> assertThat(deadlineFilter(c).getOrder()).isEqualTo(7)),
            set("stagger.http.builders", "payments", c -> {
                RestClient.Builder restClient = RestClient.builder();
                started(c).getBeansOfType(RestClientCustomizer.class).values().forEach(k -> k.customize(restClient));
                List<String> interceptors = new ArrayList<>();
                restClient.requestInterceptors(list -> list.forEach(i -> interceptors.add(i.toString())));
                RestTemplate restTemplate = new RestTemplate();
                c.getBeansOfType(RestTemplateCustomizer.class).values().forEach(k -> k.customize(restTemplate));
                restTemplate.getInterceptors().forEach(i -> interceptors.add(i.toString()));
                assertThat(interceptors).containsExactly("RetryingRequestInterceptor{payments}", "RetryingRequestInterceptor{payments}");
            }),
            // transactions
            set("stagger.transactions.retry", "orders",
                    c -> assertThat(started(c).getBean(RetryingTransactionTemplate.class).retry().policy().maxAttempts()).isEqualTo(9),
                    R + "max-attempts=9"),
            // the idempotency filter
            set(I + "enabled", "true", c -> assertThat(filter(c).getFilter()).isNotNull(), MEMORY),
            set(I + "paths", "/api/*", c -> assertThat(filter(c).getUrlPatterns()).containsExactly("/api/*"), ENABLED, MEMORY),
            // POST /orders without a key: left alone when excluded, refused (key-missing) otherwise
            set(I + "exclude-paths", "/orders", c -> assertThat(passesTheFilter(c, Map.of())).isTrue(), ENABLED, MEMORY),
            set(I + "store", "memory", c -> assertThat(started(c).getBean(IdempotencyStore.class))
                    .isInstanceOf(InMemoryIdempotencyStore.class), ENABLED),
            set(I + "table-prefix", "shop_keys_", c -> assertThat(((JdbcIdempotencyStore) started(c).getBean(IdempotencyStore.class))
                    .tableName()).startsWith("shop_keys_"), ENABLED),
            set(I + "schema-mode", "validate", c -> assertThat(c.getStartupFailure()).as("no tables to validate").isNotNull(), ENABLED),
            set(I + "scope-header", "X-Api-Key", c -> assertThat(passesTheFilter(c,
                    Map.of("X-Api-Key", "secret-a", "Idempotency-Key", "\"k-1\""))).isTrue(), ENABLED, MEMORY),
            set(I + "key-requirement", "optional", c -> assertThat(passesTheFilter(c, Map.of())).isTrue(), ENABLED, MEMORY),
            set(I + "expiry", "2h", c -> assertThat(filter(c).getFilter().toString()).contains("expiry=PT2H"), ENABLED, MEMORY),
            set(I + "lease", "5s", c -> assertThat(filter(c).getFilter().toString()).contains("lease=PT5S"), ENABLED, MEMORY),
            set(I + "order", "7", c -> assertThat(filter(c).getOrder()).isEqualTo(7), ENABLED, MEMORY),
            // reaches the filter's transactions, which refuse this SQLite store (TransactionalIdempotencyTest: PostgreSQL)
            set(I + "transactional", "true", refused(I + "transactional", "true"), ENABLED),
            // jobs
            set(J + "enabled", "true", c -> assertThat(started(c).getBean(StaggerJobPools.class).pools()).containsOnlyKeys("mail")),
            set(J + "table-prefix", "shop_", c -> assertThat(DatabaseTables.named(started(c).getBean(DataSource.class), "%")).contains("shop_jobs"), JOBS),
            set(J + "schema-mode", "validate", c -> assertThat(c.getStartupFailure()).as("no tables to validate").isNotNull(), JOBS),
            set(J + "phase", "42", c -> assertThat(started(c).getBean(StaggerJobPools.class).getPhase()).isEqualTo(42), JOBS),
            // a pool's settings go to WorkerPool's builder, which does not show them: its refusal does
            set(J + "pools.mail.concurrency", "0", refused("stagger.jobs.pools.mail.concurrency", "0"), JOBS),
            set(J + "pools.mail.poll-interval", "0s", refused("stagger.jobs.pools.mail.poll-interval", "PT0S"), JOBS),
            set(J + "pools.mail.lease", "100ms", refused("stagger.jobs.pools.mail.lease", "PT0.1S"), JOBS),
            set(J + "pools.mail.shutdown-timeout", "-1s", refused("stagger.jobs.pools.mail.shutdown-timeout", "PT-1S"), JOBS),
            set(J + "pools.mail.nesting", "refuse", refused("stagger.jobs.pools.mail.nesting", "REFUSE"), JOBS),
            // the pool builds the retry it names: one whose inherited backoff is bad fails under that name
            set(J + "pools.mail.retry", "mailing", refused("stagger.retries.mailing.backoff.type", "bogus"),
                    JOBS, "stagger.retries.default.backoff.type=bogus"),
            // operations
            set("stagger.logging.enabled", "false", c -> assertThat(retry(c, "orders").listeners())
                    .noneMatch(l -> l instanceof RetryLog)),
            set("stagger.metrics.enabled", "false", c -> assertThat(started(c).getBeansOfType(RetryMetrics.class)).isEmpty()),
            set("stagger.observation.enabled", "false", c -> assertThat(retry(c, "orders").listeners())
                    .noneMatch(l -> l instanceof RetryObservation)),
            set("stagger.context-propagation.enabled", "false", c -> assertThat(retry(c, "orders").listeners())
                    .noneMatch(l -> l instanceof CallerContext)),
            set("stagger.health.circuit-breaker-status.closed", "DOWN", c -> assertThat(health(c)).isEqualTo("DOWN"), ONE_FAILURE_OPENS),
            set("stagger.health.circuit-breaker-status.open", "OUT_OF_SERVICE", c -> {
                breaker(c).forceOpen();
                assertThat(health(c)).isEqualTo("OUT_OF_SERVICE");
            }, ONE_FAILURE_OPENS),
            set("stagger.health.circuit-breaker-status.half-open", "DOWN", c -> {
                CircuitBreaker breaker = breaker(c);
                fail(breaker);
                clock(c).advance(Duration.ofSeconds(2));
                assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
                assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
                assertThat(health(c)).isEqualTo("DOWN");
            }, ONE_FAILURE_OPENS, B + "open-duration=1s"),
            // Spring's own retry API
            set("stagger.spring-retry.template", "orders",
                    c -> assertThat(started(c).getBean(StaggerRetryTemplate.class).retry().name()).isEqualTo("orders")),
            set("stagger.spring-retry.annotations", "true", c -> {
                Reader reader = started(c).getBean(Reader.class);
                assertThatThrownBy(reader::read).isInstanceOf(IllegalStateException.class);
                assertThat(reader.calls()).isEqualTo(3); // the default entry's 3 attempts
            }),
            set("stagger.spring-retry.retry", "orders", c -> {
                Reader reader = started(c).getBean(Reader.class);
                assertThatThrownBy(reader::read).isInstanceOf(IllegalStateException.class);
                assertThat(reader.calls()).isEqualTo(2);
            }, "stagger.spring-retry.annotations=true", R + "max-attempts=2"));

    @TestFactory
    Stream<DynamicTest> eachPropertyChangesWhatTheStarterBuildsAndNothingElseDoes() {
        return CASES.stream().map(c -> DynamicTest.dynamicTest(c.toString(), () -> {
            List<String> properties = new ArrayList<>(c.with());
            properties.add(c.property() + "=" + c.value());
            runner().withPropertyValues(properties.toArray(String[]::new)).run(context -> c.check().verify(context));
            // the control: the same check, without the property, fails
            runner().withPropertyValues(c.with().toArray(String[]::new)).run(context ->
                    assertThatThrownBy(() -> c.check().verify(context)).as("the check without " + c.property()).isNotNull());
        }));
    }

    // ---- the properties the metadata lists ----

    private static String metadata() throws Exception {
        try (InputStream in = EveryPropertyTest.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("META-INF/spring-configuration-metadata.json on the class path").isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * Every property a user can set: the metadata's, where a map of named instances (its values a
     * class of {@link StaggerProperties}) stands for the properties of that class under
     * {@code <name>}, and a map of strings for the keys its hints list.
     */
    static Set<String> leafProperties() throws Exception {
        String json = metadata();
        List<Map<String, Object>> properties = JsonPath.read(json, "$.properties[*]");
        Pattern map = Pattern.compile("java\\.util\\.Map<java\\.lang\\.String,\\s*([\\w.$]+)>");
        Set<String> leaves = new TreeSet<>();
        for (Map<String, Object> p : properties) {
            String name = (String) p.get("name");
            if (!name.startsWith("stagger.")) {
                continue;
            }
            Matcher m = map.matcher(String.valueOf(p.get("type")));
            if (m.matches() && m.group(1).startsWith("dev.stagger.")) {
                expand(name + ".<name>", load(m.group(1)), leaves);
            } else if (m.matches()) {
                List<String> keys = JsonPath.read(json, "$.hints[?(@.name == '" + name + ".keys')].values[*].value");
                assertThat(keys).as("the keys of map " + name + " in the hints").isNotEmpty();
                keys.forEach(k -> leaves.add(name + "." + k));
            } else {
                leaves.add(name);
            }
        }
        return leaves;
    }

    private static void expand(String prefix, Class<?> type, Set<String> leaves) {
        for (PropertyDescriptor d : BeanUtils.getPropertyDescriptors(type)) {
            if (d.getWriteMethod() == null) {
                continue;
            }
            String name = prefix + "." + d.getName().replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
            if (d.getPropertyType().getName().startsWith(StaggerProperties.class.getName() + "$")) {
                expand(name, d.getPropertyType(), leaves);
            } else {
                leaves.add(name);
            }
        }
    }

    /** A class by its canonical or binary name. */
    private static Class<?> load(String name) throws ClassNotFoundException {
        String n = name;
        while (true) {
            try {
                return Class.forName(n);
            } catch (ClassNotFoundException e) {
                int dot = n.lastIndexOf('.');
                if (dot < 0) {
                    throw e;
                }
                n = n.substring(0, dot) + "$" + n.substring(dot + 1);
            }
        }
    }

    @Test
    void everyPropertyOfTheMetadataHasACase() throws Exception {
        Set<String> cases = new TreeSet<>();
        CASES.forEach(c -> cases.add(c.template()));
        // stagger.kafka.* need a broker: EveryKafkaPropertyTest has their cases
        assertThat(cases).containsExactlyInAnyOrderElementsOf(leafProperties().stream()
                .filter(p -> !p.startsWith(EveryKafkaPropertyTest.PREFIX)).toList());
    }

    @Test
    void theDeadlineHeadersTheFilterIgnoredAreCountedInTheMeterRegistry() {
        runner().run(c -> {
            assertThat(refusedDeadlinesCounted(c)).isEqualTo(1);
            MeterRegistry registry = c.getBean(MeterRegistry.class);
            assertThat(registry.get(StaggerHttpServerAutoConfiguration.METER).tag("outcome", "rejected").functionCounter().count())
                    .isEqualTo(1.0);
            assertThat(registry.get(StaggerHttpServerAutoConfiguration.METER).tag("outcome", "capped").functionCounter().count())
                    .isZero();
        });
    }

    @Test
    void aHealthStatusOfTheApplicationsOwnIsReportedForTheStateMappedToIt() {
        runner().withPropertyValues(ONE_FAILURE_OPENS, "stagger.health.circuit-breaker-status.open=degraded").run(c -> {
            breaker(c).forceOpen();
            assertThat(health(c)).isEqualTo("DEGRADED"); // worse than UP and UNKNOWN, better than OUT_OF_SERVICE
        });
    }

    // ---- bad values ----

    /**
     * {@code shown}: what the message must contain. A value Stagger refuses is quoted as bound
     * ({@code Property <name> with value '<value>' is invalid: <reason>}); one Boot cannot convert
     * is named by Boot's own binding failure.
     */
    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
            "stagger.retries.orders.max-attempts|0|value '0'|",                                  // a number out of range
            "stagger.retries.orders.max-attempts|three|three|",                                  // not a number
            "stagger.retries.orders.deadline|-5s|value 'PT-5S'|",                                // a negative duration
            "stagger.retries.orders.deadline|soon|soon|",                                        // not a duration
            "stagger.circuit-breakers.downstream.failure-rate-threshold|1.5|value '1.5'|",       // a fraction above 1
            "stagger.budgets.shared.ratio|-1|value '-1.0'|",                                     // a fraction below 0
            "stagger.retries.orders.backoff.type|sometimes|value 'sometimes'|",                  // not one of the choices
            "stagger.http.clients.payments.idempotency-keys|maybe|value 'maybe'|",               // not one of the choices
            "stagger.retries.orders.retry-on|com.example.NoSuchException|com.example.NoSuchException|", // no such class
            "stagger.circuit-breakers.downstream.record-exceptions|com.example.NoSuchException|com.example.NoSuchException|",
            "stagger.circuit-breakers.downstream.ignore-exceptions|java.lang.String|value 'java.lang.String'|", // not an exception
            "stagger.events.size|0|value '0'|management.endpoints.web.exposure.include=staggerevents",
            "stagger.http.clients.payments.retry-statuses|99|value '[99]'|",                     // not a status
            "stagger.retries.orders.budget|nope|value 'nope'|",                                  // no such budget
            "stagger.idempotency.expiry|30s|value 'PT30S'|stagger.idempotency.enabled=true",     // not longer than the lease (1 min)
            "stagger.jobs.pools.mail.lease|100ms|value 'PT0.1S'|stagger.jobs.enabled=true",      // below the builder's minimum
            "stagger.health.circuit-breaker-status.opened|DOWN|value 'DOWN'|",                   // no such breaker state
            "stagger.http.server.deadline.max|0s|value 'PT0S'|",                                 // below 1 ms
            "stagger.bulkheads.pool.min-concurrent|30|value '30'|",                             // above max-concurrent (25)
            "stagger.retries.orders.bulkhead|nope|value 'nope'|",                                // no such bulkhead
    })
    void aBadValueOfEachKindFailsStartupNamingThePropertyAndTheValue(String property, String value, String shown, String with) {
        List<String> properties = new ArrayList<>(List.of(property + "=" + value, MEMORY));
        if (with != null) {
            properties.add(with);
        }
        runner().withPropertyValues(properties.toArray(String[]::new)).run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure())).contains(property).contains(shown);
        });
    }
}
