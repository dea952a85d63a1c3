package dev.stagger.http;

import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.BudgetExhaustedException;
import dev.stagger.CircuitBreaker;
import dev.stagger.CircuitOpenException;
import dev.stagger.RetryBudget;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The breaker and the budget, which decide when to stop retrying altogether. */
class GuardsTest {
    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void aBreakerCountingRetryableStatusesStopsRetryingOnceItOpens() throws Exception {
        server.otherwise(status(503, "down"));
        CircuitBreaker breaker = CircuitBreaker.builder("orders").consecutiveFailures(2)
                .failurePredicate(StatusTable.defaults().failures()).clock(clock).build();
        RetryingHttpClient http = client(clock, 5).circuitBreaker(breaker).build();
        assertThatThrownBy(() -> http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofInputStream()))
                .isInstanceOf(CircuitOpenException.class);
        assertThat(server.received()).hasSize(2);
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
    }

    @Test
    void aBreakerIgnoresStatusesThatSayNothingAboutTheDownstream() throws Exception {
        server.otherwise(status(404, "no such item"));
        CircuitBreaker breaker = CircuitBreaker.builder("orders").consecutiveFailures(2)
                .failurePredicate(StatusTable.defaults().failures()).clock(clock).build();
        RetryingHttpClient http = client(clock, 5).circuitBreaker(breaker).build();
        for (int i = 0; i < 3; i++) {
            assertThat(http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()).statusCode())
                    .isEqualTo(404);
        }
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void theStreamedBodyOfAResponseRefusedByAGuardIsReleased() throws Exception {
        server.otherwise(status(503, "down"));
        RetryBudget budget = RetryBudget.builder("orders").maxTokens(1).minRetriesPerSecond(0).clock(clock).build();
        RetryingHttpClient http = client(clock, 5).budget(budget).build();

        Throwable refused = catchThrowable(() -> http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofInputStream()));

        assertThat(refused).isInstanceOf(BudgetExhaustedException.class);
        Object last = ((BudgetExhaustedException) refused).lastResult();
        assertThat(last).isInstanceOfSatisfying(HttpResponse.class, response -> assertThatThrownBy(
                () -> ((InputStream) response.body()).read()).as("body closed").isInstanceOf(IOException.class));
    }

    @Test
    void anExhaustedBudgetRefusesTheRetry() throws Exception {
        server.otherwise(status(503, "down"));
        RetryBudget budget = RetryBudget.builder("orders").maxTokens(1).minRetriesPerSecond(0).clock(clock).build();
        RetryingHttpClient http = client(clock, 5).budget(budget).build();
        assertThatThrownBy(() -> http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(BudgetExhaustedException.class);
        assertThat(server.received()).hasSize(2);
    }
}
