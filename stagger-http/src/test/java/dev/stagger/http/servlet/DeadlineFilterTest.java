package dev.stagger.http.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryScope;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Proxy;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The deadline filter: the incoming deadline bounds the retries run while serving; bad values are
 * ignored and counted; "do not retry" is answered only for an error a retry decided.
 */
class DeadlineFilterTest {
    private static final HttpClient JDK = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private Service service;
    /** What the handler saw: the scope's remaining time on its thread. */
    private final AtomicReference<Optional<Duration>> seen = new AtomicReference<>();

    @AfterEach
    void stop() throws Exception {
        if (service != null) {
            service.close();
        }
    }

    private DeadlineFilter serve(DeadlineFilter filter, Service.Handler handler) throws Exception {
        service = new Service(handler, filter);
        return filter;
    }

    /** A handler that reports the deadline it runs under and answers 200. */
    private Service.Handler reportsDeadline() {
        return (request, response) -> {
            seen.set(RetryScope.currentRemaining());
            response.setStatus(200);
        };
    }

    private HttpResponse<String> send(String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(service.uri("/work")).timeout(Duration.ofSeconds(20));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return JDK.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * A handler that runs a retry which always fails (it gives up after two attempts, 1 ms apart),
     * then answers with {@code answer}.
     */
    private static Service.Handler afterARetryGaveUp(Service.Handler answer) {
        return (request, response) -> {
            try {
                Retry.of("inner", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofMillis(1))).build())
                        .withoutBudget()
                        .call(() -> {
                            throw new IllegalStateException("down");
                        });
            } catch (Exception e) {
                answer.handle(request, response);
            }
        };
    }

    @Test
    void theIncomingDeadlineBoundsTheWorkOfTheRequest() throws Exception {
        serve(DeadlineFilter.builder().build(), reportsDeadline());
        assertThat(send("Stagger-Deadline-Ms", "1500").statusCode()).isEqualTo(200);
        assertThat(seen.get()).hasValueSatisfying(d -> assertThat(d).isPositive().isLessThanOrEqualTo(Duration.ofMillis(1500)));
    }

    @Test
    void aRetryRunWhileServingEndsByTheIncomingDeadline() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        serve(DeadlineFilter.builder().build(), (request, response) -> {
            try {
                // waits of 10 s: without the request's deadline, five attempts would take 40 s
                Retry.of("slow", RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofSeconds(10))).build())
                        .withoutBudget()
                        .call(() -> {
                            attempts.incrementAndGet();
                            throw new IllegalStateException("down");
                        });
            } catch (Exception e) {
                response.sendError(503);
            }
        });
        HttpResponse<String> answer = send("Stagger-Deadline-Ms", "2000");
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(attempts).hasValue(1);
        assertThat(answer.headers().firstValue("Stagger-No-Retry")).hasValue("deadline");
    }

    @Test
    void withoutTheHeaderThereIsNoBound() throws Exception {
        serve(DeadlineFilter.builder().build(), reportsDeadline());
        send();
        assertThat(seen.get()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"-5", "abc", "1.5", "1e3", "10ms", "9999999999999999999"})
    void aBadValueIsIgnoredAndCounted(String value) throws Exception {
        DeadlineFilter filter = serve(DeadlineFilter.builder().build(), reportsDeadline());
        assertThat(send("Stagger-Deadline-Ms", value).statusCode()).isEqualTo(200);
        assertThat(seen.get()).isEmpty();
        assertThat(filter.rejectedDeadlines()).isEqualTo(1);
    }

    @Test
    void aHugeValueIsIgnoredAndCounted() throws Exception {
        DeadlineFilter filter = serve(DeadlineFilter.builder().build(), reportsDeadline());
        assertThat(send("Stagger-Deadline-Ms", "7".repeat(4000)).statusCode()).isEqualTo(200);
        assertThat(seen.get()).isEmpty();
        assertThat(filter.rejectedDeadlines()).isEqualTo(1);
    }

    @Test
    void aDeadlineBeyondTheMaximumIsCappedAndCounted() throws Exception {
        DeadlineFilter filter = serve(DeadlineFilter.builder().maxDeadline(Duration.ofSeconds(2)).build(), reportsDeadline());
        send("Stagger-Deadline-Ms", "999999999999");
        assertThat(seen.get()).hasValueSatisfying(d -> assertThat(d).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2)));
        assertThat(filter.cappedDeadlines()).isEqualTo(1);
        assertThat(filter.rejectedDeadlines()).isZero();
    }

    @Test
    void theDefaultMaximumIsFiveMinutes() {
        assertThat(DeadlineFilter.builder().build().maxDeadline()).isEqualTo(Duration.ofMinutes(5));
        assertThatThrownBy(() -> DeadlineFilter.builder().maxDeadline(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxDeadline").hasMessageContaining("PT0S");
    }

    @Test
    void anUntrustedCallersDeadlineIsIgnored() throws Exception {
        DeadlineFilter filter = serve(DeadlineFilter.builder().deadlinesTrusted(request -> false).build(), reportsDeadline());
        send("Stagger-Deadline-Ms", "1500");
        assertThat(seen.get()).isEmpty();
        assertThat(filter.rejectedDeadlines()).isZero();
    }

    @Test
    void aRequestThatArrivesOutOfTimeIsNotRun() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        DeadlineFilter filter = serve(DeadlineFilter.builder().build(), (request, response) -> runs.incrementAndGet());
        HttpResponse<String> answer = send("Stagger-Deadline-Ms", "0");
        assertThat(answer.statusCode()).isEqualTo(504);
        assertThat(answer.headers().firstValue("Stagger-No-Retry")).hasValue("deadline");
        assertThat(runs).hasValue(0);
        assertThat(filter.expiredDeadlines()).isEqualTo(1);
    }

    @Test
    void anErrorAfterARetryGaveUpSaysDoNotRetry() throws Exception {
        serve(DeadlineFilter.builder().build(), afterARetryGaveUp((request, response) -> response.sendError(503)));
        assertThat(send().headers().firstValue("Stagger-No-Retry")).hasValue("gave-up");
    }

    @Test
    void aStatusSetDirectlyIsMarkedToo() throws Exception {
        serve(DeadlineFilter.builder().build(), afterARetryGaveUp((request, response) -> {
            response.setStatus(500);
            response.getWriter().write("failed");
        }));
        HttpResponse<String> answer = send();
        assertThat(answer.statusCode()).isEqualTo(500);
        assertThat(answer.headers().firstValue("Stagger-No-Retry")).hasValue("gave-up");
    }

    @Test
    void anExceptionAfterARetryGaveUpIsAnsweredWithDoNotRetry() throws Exception {
        serve(DeadlineFilter.builder().build(), afterARetryGaveUp((request, response) -> {
            throw new IllegalStateException("the handler gave up too");
        }));
        HttpResponse<String> answer = send();
        assertThat(answer.statusCode()).isEqualTo(500);
        assertThat(answer.headers().firstValue("Stagger-No-Retry")).hasValue("gave-up");
    }

    @Test
    void anErrorNoRetryDecidedOnIsLeftRetryable() throws Exception {
        serve(DeadlineFilter.builder().build(), (request, response) -> response.sendError(503));
        assertThat(send().headers().firstValue("Stagger-No-Retry")).isEmpty();
    }

    @Test
    void aSuccessAfterARetryGaveUpIsNotMarked() throws Exception {
        serve(DeadlineFilter.builder().build(), afterARetryGaveUp((request, response) -> response.setStatus(200)));
        HttpResponse<String> answer = send();
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("Stagger-No-Retry")).isEmpty();
    }

    @Test
    void aClientErrorAfterARetryGaveUpIsNotMarked() throws Exception {
        serve(DeadlineFilter.builder().build(), afterARetryGaveUp((request, response) -> response.sendError(404)));
        assertThat(send().headers().firstValue("Stagger-No-Retry")).isEmpty();
    }

    @Test
    void theScopeIsClosedWhenTheChainThrows() {
        DeadlineFilter filter = DeadlineFilter.builder().build();
        HttpServletRequest request = fake(HttpServletRequest.class, "1500");
        HttpServletResponse response = fake(HttpServletResponse.class, null);
        assertThatThrownBy(() -> filter.doFilter(request, response, (req, res) -> {
            assertThat(RetryScope.currentRemaining()).isPresent();
            throw new IllegalStateException("handler failed");
        })).hasMessage("handler failed");
        assertThat(RetryScope.currentRemaining()).as("left open on the thread").isEmpty();
    }

    /**
     * A request whose deadline header is {@code deadline} and whose attributes are kept, or a
     * response that is never committed; every other method answers its type's zero.
     */
    private static <T> T fake(Class<T> type, String deadline) {
        java.util.Map<String, Object> attributes = new java.util.HashMap<>();
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            switch (method.getName()) {
                case "getHeader":
                    return "Stagger-Deadline-Ms".equalsIgnoreCase((String) args[0]) ? deadline : null;
                case "getAttribute":
                    return attributes.get((String) args[0]);
                case "setAttribute":
                    attributes.put((String) args[0], args[1]);
                    return null;
                case "getDispatcherType":
                    return jakarta.servlet.DispatcherType.REQUEST;
                case "getStatus":
                    return 200;
                default:
                    Class<?> r = method.getReturnType();
                    return r == boolean.class ? false : r == int.class ? 0 : r == long.class ? 0L : null;
            }
        }));
    }
}
