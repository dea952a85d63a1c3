package dev.stagger.benchmarks.grpc;

import dev.stagger.Backoff;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.grpc.RetryingClientInterceptor;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What {@code RetryingClientInterceptor} adds to a unary gRPC call that succeeds at once, on the
 * in-process transport (no network, direct executors: the cost of gRPC itself is the anchor).
 *
 * <ul>
 *   <li>{@code unary_plain}: a blocking unary call on a channel without the interceptor;</li>
 *   <li>{@code unary_stagger}: the same call through the interceptor, 3 attempts, no deadline, no budget;</li>
 *   <li>{@code unary_staggerInteractive}: through the interceptor with {@code RetryPolicy.interactive()}
 *       and the default budget: a 15 s deadline, so each attempt is sent with a gRPC deadline
 *       (a timer per call, as any call made with {@code withDeadlineAfter}).</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:+AlwaysPreTouch"})
public class GrpcInterceptorBenchmark {
    private static final MethodDescriptor.Marshaller<String> STRING = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private static final MethodDescriptor<String, String> GET = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("bench.Inventory", "Get"))
            .setIdempotent(true)
            .setRequestMarshaller(STRING)
            .setResponseMarshaller(STRING)
            .build();

    private Server server;
    private ManagedChannel plain;
    private ManagedChannel stagger;
    private ManagedChannel staggerInteractive;

    @Setup
    public void setUp() throws IOException {
        String name = "bench-grpc-" + System.nanoTime();
        ServerServiceDefinition service = ServerServiceDefinition.builder("bench.Inventory")
                .addMethod(GET, ServerCalls.asyncUnaryCall((request, response) -> {
                    response.onNext(request);
                    response.onCompleted();
                }))
                .build();
        server = InProcessServerBuilder.forName(name).directExecutor().addService(service).build().start();
        plain = InProcessChannelBuilder.forName(name).directExecutor().disableRetry().build();
        Retry threeAttempts = Retry.of("bench-grpc",
                RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build()).withoutBudget();
        stagger = InProcessChannelBuilder.forName(name).directExecutor().disableRetry()
                .intercept(RetryingClientInterceptor.builder(threeAttempts).build()).build();
        staggerInteractive = InProcessChannelBuilder.forName(name).directExecutor().disableRetry()
                .intercept(RetryingClientInterceptor.builder(Retry.of("bench-grpc-interactive", RetryPolicy.interactive()))
                        .build())
                .build();
        for (ManagedChannel c : new ManagedChannel[] {plain, stagger, staggerInteractive}) {
            if (!"sku".equals(ClientCalls.blockingUnaryCall(c, GET, CallOptions.DEFAULT, "sku"))) {
                throw new IllegalStateException("the echo service answered something else");
            }
        }
    }

    @TearDown
    public void tearDown() throws InterruptedException {
        for (ManagedChannel c : new ManagedChannel[] {plain, stagger, staggerInteractive}) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Benchmark
    public String unary_plain() {
        return ClientCalls.blockingUnaryCall(plain, GET, CallOptions.DEFAULT, "sku");
    }

    @Benchmark
    public String unary_stagger() {
        return ClientCalls.blockingUnaryCall(stagger, GET, CallOptions.DEFAULT, "sku");
    }

    @Benchmark
    public String unary_staggerInteractive() {
        return ClientCalls.blockingUnaryCall(staggerInteractive, GET, CallOptions.DEFAULT, "sku");
    }
}
