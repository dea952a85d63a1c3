package dev.stagger.grpc;

import io.grpc.BindableService;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A real gRPC server on loopback (in-process or Netty TCP) whose answers follow a script, one step
 * per attempt, and that records what each attempt carried: its metadata and its deadline.
 * Methods are built by hand with a string marshaller, so no code generation is needed.
 */
final class ScriptedServer implements AutoCloseable {
    /** The two transports every behaviour is checked on. */
    enum Transport { IN_PROCESS, NETTY }

    static final MethodDescriptor.Marshaller<String> STRING = new MethodDescriptor.Marshaller<>() {
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

    static final String SERVICE = "test.Inventory";
    /** Unary, idempotent (the proto's idempotency_level IDEMPOTENT). */
    static final MethodDescriptor<String, String> GET = method("Get", MethodDescriptor.MethodType.UNARY, true);
    /** Unary, not safe to call twice. */
    static final MethodDescriptor<String, String> RESERVE = method("Reserve", MethodDescriptor.MethodType.UNARY, false);
    /** Server streaming, idempotent: answers the request split on commas, one message each. */
    static final MethodDescriptor<String, String> LIST = method("List", MethodDescriptor.MethodType.SERVER_STREAMING, true);

    private static final Metadata.Key<String> PREVIOUS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> STAGGER_ATTEMPT =
            Metadata.Key.of("stagger-attempt", Metadata.ASCII_STRING_MARSHALLER);
    private static final Context.Key<Metadata> HEADERS = Context.key("headers");
    private static final Context.Key<String> METHOD = Context.key("method");

    /** What one attempt carried, as the server saw it. */
    record Seen(String method, String previousAttempts, String staggerAttempt, long deadlineMillis) {
    }

    /** One scripted answer. */
    interface Step {
        void answer(String request, StreamObserver<String> response);
    }

    private final Queue<Step> script = new ConcurrentLinkedQueue<>();
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    /** Counted down when an attempt the server was still working on is cancelled by the client. */
    final CountDownLatch cancelled = new CountDownLatch(1);
    private final Server server;
    final ManagedChannel channel;

    private ScriptedServer(Transport transport, Consumer<io.grpc.ManagedChannelBuilder<?>> channelSetup) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder(SERVICE)
                .addMethod(GET, ServerCalls.asyncUnaryCall(this::serve))
                .addMethod(RESERVE, ServerCalls.asyncUnaryCall(this::serve))
                .addMethod(LIST, ServerCalls.asyncServerStreamingCall(this::serve))
                .build();
        BindableService bindable = () -> ServerInterceptors.intercept(service, recorder());
        io.grpc.ManagedChannelBuilder<?> channelBuilder;
        if (transport == Transport.IN_PROCESS) {
            String name = "scripted-" + UUID.randomUUID();
            server = InProcessServerBuilder.forName(name).addService(bindable).build().start();
            channelBuilder = InProcessChannelBuilder.forName(name);
        } else {
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(bindable)
                    .build().start();
            channelBuilder = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext();
        }
        channelBuilder.disableRetry(); // gRPC's own retry off: the attempts counted here are Stagger's
        channelSetup.accept(channelBuilder);
        channel = channelBuilder.build();
    }

    /** A server on {@code transport} and a channel to it, set up by {@code channelSetup} (its interceptors). */
    static ScriptedServer start(Transport transport, Consumer<io.grpc.ManagedChannelBuilder<?>> channelSetup)
            throws IOException {
        return new ScriptedServer(transport, channelSetup);
    }

    /** Adds steps to the script; once it runs out every attempt succeeds with {@code "ok:<request>"}. */
    ScriptedServer then(Step... steps) {
        script.addAll(List.of(steps));
        return this;
    }

    static Step ok() {
        return (request, response) -> {
            for (String part : request.split(",")) {
                response.onNext("ok:" + part);
            }
            response.onCompleted();
        };
    }

    static Step fail(Status.Code code) {
        return (request, response) -> response.onError(code.toStatus().asRuntimeException());
    }

    /** Fails with {@code code} and {@code grpc-retry-pushback-ms: value} in the trailers. */
    static Step failWithPushback(Status.Code code, String value) {
        return (request, response) -> {
            Metadata trailers = new Metadata();
            trailers.put(Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER), value);
            response.onError(code.toStatus().asRuntimeException(trailers));
        };
    }

    /** Sends the first message of the stream, then fails with {@code code}. */
    static Step oneMessageThenFail(Status.Code code) {
        return (request, response) -> {
            response.onNext("partial");
            response.onError(code.toStatus().asRuntimeException());
        };
    }

    /** Never answers; counts down {@link #cancelled} when the client cancels the attempt. */
    Step hang() {
        return (request, response) -> Context.current().addListener(c -> cancelled.countDown(), Runnable::run);
    }

    private void serve(String request, StreamObserver<String> response) {
        Metadata h = HEADERS.get();
        Deadline deadline = Context.current().getDeadline();
        seen.add(new Seen(METHOD.get(),
                h.get(PREVIOUS), h.get(STAGGER_ATTEMPT),
                deadline == null ? -1 : deadline.timeRemaining(TimeUnit.MILLISECONDS)));
        Step step = script.poll();
        (step != null ? step : ok()).answer(request, response);
    }


    private ServerInterceptor recorder() {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                         ServerCallHandler<ReqT, RespT> next) {
                Context c = Context.current().withValue(HEADERS, headers)
                        .withValue(METHOD, call.getMethodDescriptor().getBareMethodName());
                return io.grpc.Contexts.interceptCall(c, call, headers, next);
            }
        };
    }

    /** The attempts the server saw. */
    long attempts() {
        return seen.size();
    }

    private static MethodDescriptor<String, String> method(String name, MethodDescriptor.MethodType type, boolean idempotent) {
        return MethodDescriptor.<String, String>newBuilder()
                .setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setIdempotent(idempotent)
                .setRequestMarshaller(STRING)
                .setResponseMarshaller(STRING)
                .build();
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow();
        server.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
        server.awaitTermination(5, TimeUnit.SECONDS);
    }
}
