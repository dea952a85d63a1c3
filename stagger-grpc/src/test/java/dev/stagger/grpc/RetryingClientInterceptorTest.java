package dev.stagger.grpc;

import static dev.stagger.grpc.ScriptedServer.GET;
import static dev.stagger.grpc.ScriptedServer.LIST;
import static dev.stagger.grpc.ScriptedServer.RESERVE;
import static dev.stagger.grpc.ScriptedServer.fail;
import static dev.stagger.grpc.ScriptedServer.failWithPushback;
import static dev.stagger.grpc.ScriptedServer.oneMessageThenFail;
import static dev.stagger.grpc.ScriptedServer.ok;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.BudgetExhaustedException;
import dev.stagger.CircuitBreaker;
import dev.stagger.CircuitOpenException;
import dev.stagger.EndReason;
import dev.stagger.HedgePolicy;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryPolicy;
import dev.stagger.grpc.Calls.Answer;
import dev.stagger.grpc.Calls.Events;
import dev.stagger.grpc.ScriptedServer.Seen;
import dev.stagger.grpc.ScriptedServer.Transport;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import io.grpc.CallOptions;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The interceptor against real gRPC servers on loopback: in-process and Netty over TCP. */
class RetryingClientInterceptorTest {
    private final VirtualClock clock = new VirtualClock();
    private final Events events = new Events();

    /** Three attempts, 100 ms apart, no budget: each test adds what it is about. */
    private static RetryPolicy.Builder policy() {
        return RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100)));
    }

    private Retry retry(RetryPolicy policy) {
        return Retry.of("inventory", policy).withClock(clock).withoutBudget().withListener(events);
    }

    private ScriptedServer server(Transport transport, Retry retry) throws Exception {
        return server(transport, retry, b -> b);
    }

    private ScriptedServer server(Transport transport, Retry retry,
                                  UnaryOperator<RetryingClientInterceptor.Builder> setup) throws Exception {
        RetryingClientInterceptor interceptor = setup.apply(RetryingClientInterceptor.builder(retry)).build();
        return ScriptedServer.start(transport, channel -> channel.intercept(interceptor));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void retriesUnavailableUntilTheCallSucceeds(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(fail(Status.Code.UNAVAILABLE), fail(Status.Code.UNAVAILABLE));

            Answer answer = Calls.unary(clock, server.channel, RESERVE, "sku-1");

            assertThat(answer.value()).isEqualTo("ok:sku-1");
            assertThat(server.attempts()).isEqualTo(3);
            assertThat(events.last().reason()).isEqualTo(EndReason.RECOVERED);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void endsANotFoundAtOnceWithoutRetrying(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(fail(Status.Code.NOT_FOUND));

            Answer answer = Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(answer.status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
            assertThat(server.attempts()).isEqualTo(1);
            assertThat(events.last().reason()).isEqualTo(EndReason.NOT_RETRYABLE);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void retriesDeadlineExceededForAnIdempotentMethod(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(fail(Status.Code.DEADLINE_EXCEEDED));

            Answer answer = Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(answer.ok()).isTrue();
            assertThat(server.attempts()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void sendsAMethodThatIsNotIdempotentOnceOnDeadlineExceeded(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(fail(Status.Code.DEADLINE_EXCEEDED));

            Answer answer = Calls.unary(clock, server.channel, RESERVE, "sku-1");

            assertThat(answer.status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            assertThat(server.attempts()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void retriesAMethodTheBuilderDeclaresSafeToRepeat(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()),
                b -> b.safeToRepeat(m -> m.getBareMethodName().equals("Reserve")))) {
            server.then(fail(Status.Code.ABORTED));

            Answer answer = Calls.unary(clock, server.channel, RESERVE, "sku-1");

            assertThat(answer.ok()).isTrue();
            assertThat(server.attempts()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void waitsAtLeastThePushbackBeforeTheNextAttempt(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().backoff(Backoff.none()).build()))) {
            server.then(failWithPushback(Status.Code.UNAVAILABLE, "3000"));

            Answer answer = Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(answer.ok()).isTrue();
            assertThat(events.scheduled).singleElement()
                    .satisfies(e -> assertThat(e.delay()).isEqualTo(Duration.ofSeconds(3)));
            assertThat(clock.now()).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void stopsRetryingOnANegativePushback(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(failWithPushback(Status.Code.UNAVAILABLE, "-1"));

            Answer answer = Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(answer.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.attempts()).isEqualTo(1);
            assertThat(events.last().reason()).isEqualTo(EndReason.NOT_RETRYABLE);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void stopsRetryingOnAMalformedPushback(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(failWithPushback(Status.Code.UNAVAILABLE, "soon"));

            Answer answer = Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(answer.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.attempts()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void sendsThePreviousAttemptsAndTheAttemptNumberOnEveryAttempt(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(fail(Status.Code.UNAVAILABLE), fail(Status.Code.UNAVAILABLE));

            Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(server.seen).extracting(Seen::previousAttempts).containsExactly(null, "1", "2");
            assertThat(server.seen).extracting(Seen::staggerAttempt).containsExactly("1", "2", "3");
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void theServerSeesTheDeadlineShrinkFromAttemptToAttempt(Transport transport) throws Exception {
        RetryPolicy withDeadline = policy().backoff(Backoff.fixed(Duration.ofSeconds(2)))
                .deadline(Duration.ofSeconds(10)).build();
        try (ScriptedServer server = server(transport, retry(withDeadline))) {
            server.then(fail(Status.Code.UNAVAILABLE));

            Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(server.seen).extracting(Seen::deadlineMillis).satisfiesExactly(
                    first -> assertThat(first).isBetween(9_000L, 10_000L),
                    second -> assertThat(second).isBetween(7_000L, 8_000L));
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void theCallsOwnDeadlineBoundsTheRetry(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().backoff(Backoff.fixed(Duration.ofSeconds(2))).build()))) {
            server.then(fail(Status.Code.UNAVAILABLE));

            Answer answer = Calls.unary(clock, server.channel, GET, CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.SECONDS),
                    "sku-1");

            assertThat(answer.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.attempts()).isEqualTo(1);
            assertThat(events.last().reason()).isEqualTo(EndReason.DEADLINE);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void anExhaustedBudgetEndsTheCallWithBudget(Transport transport) throws Exception {
        RetryBudget oneRetry = RetryBudget.builder("inventory").maxTokens(1).minRetriesPerSecond(0).clock(clock).build();
        Retry retry = Retry.of("inventory", policy().maxAttempts(5).build()).withClock(clock).withBudget(oneRetry)
                .withListener(events);
        try (ScriptedServer server = server(transport, retry)) {
            server.then(fail(Status.Code.UNAVAILABLE), fail(Status.Code.UNAVAILABLE), fail(Status.Code.UNAVAILABLE));

            Answer answer = Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(events.last().reason()).isEqualTo(EndReason.BUDGET);
            assertThat(server.attempts()).isEqualTo(2);
            assertThat(answer.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(answer.status().getCause()).isInstanceOf(BudgetExhaustedException.class);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void anOpenBreakerRefusesTheCallWithoutSendingIt(Transport transport) throws Exception {
        CircuitBreaker breaker = CircuitBreaker.builder("inventory").consecutiveFailures(1)
                .openDuration(Duration.ofMinutes(1)).clock(clock).build();
        Retry retry = retry(policy().maxAttempts(1).build()).withCircuitBreaker(breaker);
        try (ScriptedServer server = server(transport, retry)) {
            server.then(fail(Status.Code.UNAVAILABLE));
            Calls.unary(clock, server.channel, GET, "opens-the-breaker");

            Answer answer = Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(server.attempts()).isEqualTo(1);
            assertThat(events.last().reason()).isEqualTo(EndReason.CIRCUIT_OPEN);
            assertThat(answer.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(answer.status().getCause()).isInstanceOf(CircuitOpenException.class);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aHedgeIsSentForASlowFirstAttemptAndTheLoserIsCancelled(Transport transport) throws Exception {
        RetryPolicy hedged = policy().hedge(HedgePolicy.after(Duration.ofMillis(50))).build();
        try (ScriptedServer server = server(transport, retry(hedged))) {
            server.then(server.hang());

            Answer answer = Calls.unary(clock, server.channel, GET, "sku-1");

            assertThat(answer.value()).isEqualTo("ok:sku-1");
            // over TCP the hedge may reach the server first: either of the two may be the one left hanging
            assertThat(server.seen).extracting(Seen::previousAttempts).containsExactlyInAnyOrder(null, "1");
            assertThat(server.cancelled.await(5, TimeUnit.SECONDS)).as("the slow attempt was cancelled").isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aMethodThatIsNotIdempotentIsNotHedged(Transport transport) throws Exception {
        RetryPolicy hedged = policy().hedge(HedgePolicy.after(Duration.ofMillis(50))).build();
        try (ScriptedServer server = server(transport, retry(hedged))) {
            server.then(fail(Status.Code.UNAVAILABLE));

            Answer answer = Calls.unary(clock, server.channel, RESERVE, "sku-1");

            assertThat(answer.ok()).isTrue();
            assertThat(server.attempts()).isEqualTo(2);
            assertThat(events.scheduled).hasSize(1); // a retry after the failure, no hedge before it
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aServerStreamIsRetriedBeforeItsFirstMessage(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(fail(Status.Code.UNAVAILABLE));

            Stream stream = stream(server, "a,b");

            assertThat(stream.messages).containsExactly("ok:a", "ok:b");
            assertThat(stream.end.join().isOk()).isTrue();
            assertThat(server.attempts()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aServerStreamIsNotRetriedAfterItsFirstMessage(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(oneMessageThenFail(Status.Code.UNAVAILABLE));

            Stream stream = stream(server, "a,b");

            assertThat(stream.messages).containsExactly("partial");
            assertThat(stream.end.join().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.attempts()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aFailureTheInterceptorGaveUpOnIsNotRetriedByTheRetryAroundIt(Transport transport) throws Exception {
        Retry inner = Retry.of("inventory", policy().maxAttempts(2).backoff(Backoff.none()).build()).withoutBudget();
        Retry outer = Retry.of("checkout", policy().maxAttempts(3).backoff(Backoff.none()).build()).withoutBudget()
                .withListener(events);
        try (ScriptedServer server = server(transport, inner)) {
            server.then(fail(Status.Code.UNAVAILABLE), fail(Status.Code.UNAVAILABLE), fail(Status.Code.UNAVAILABLE),
                    fail(Status.Code.UNAVAILABLE), fail(Status.Code.UNAVAILABLE), fail(Status.Code.UNAVAILABLE));

            Status status = Calls.statusOf(() -> {
                try {
                    outer.call(() -> ClientCalls.blockingUnaryCall(server.channel, GET, CallOptions.DEFAULT, "sku-1"));
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });

            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.attempts()).as("2 attempts of the interceptor, not 2 x 3").isEqualTo(2);
            assertThat(events.last().reason()).isEqualTo(EndReason.NOT_RETRYABLE);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cancellingTheCallDuringAWaitStopsRetrying(Transport transport) throws Exception {
        try (ScriptedServer server = server(transport, retry(policy().build()))) {
            server.then(fail(Status.Code.UNAVAILABLE));
            Future<String> call = ClientCalls.futureUnaryCall(server.channel.newCall(GET, CallOptions.DEFAULT), "sku-1");
            awaitScheduledWait();

            call.cancel(true);
            clock.runUntilIdle();

            assertThat(server.attempts()).isEqualTo(1);
            assertThat(events.last().reason()).isEqualTo(EndReason.CANCELLED);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aBlockingCallIsHedgedFromTheHedgeTimersThread(Transport transport) throws Exception {
        Retry retry = Retry.of("inventory", policy().hedge(HedgePolicy.after(Duration.ofMillis(20))).build())
                .withoutBudget();
        try (ScriptedServer server = server(transport, retry)) {
            server.then(server.hang());

            String answer = ClientCalls.blockingUnaryCall(server.channel, GET, CallOptions.DEFAULT, "sku-1");

            assertThat(answer).isEqualTo("ok:sku-1");
            assertThat(server.attempts()).isEqualTo(2);
        }
    }

    private void awaitScheduledWait() {
        Await.until("a retry wait scheduled", () -> clock.pendingTasks() > 0);
    }

    /** A server-streaming call's messages and end, driven on the virtual clock. */
    private record Stream(List<String> messages, CompletableFuture<Status> end) {
    }

    private Stream stream(ScriptedServer server, String request) {
        List<String> messages = new CopyOnWriteArrayList<>();
        CompletableFuture<Status> end = new CompletableFuture<>();
        ClientCalls.asyncServerStreamingCall(server.channel.newCall(LIST, CallOptions.DEFAULT), request,
                new StreamObserver<String>() {
                    @Override
                    public void onNext(String value) {
                        messages.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        end.complete(Status.fromThrowable(t));
                    }

                    @Override
                    public void onCompleted() {
                        end.complete(Status.OK);
                    }
                });
        Calls.drive(clock, end);
        return new Stream(messages, end);
    }
}
