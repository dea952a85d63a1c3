package dev.stagger.observability;

import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.Comparator;
import java.util.List;

/**
 * A real tracer for the tests: Micrometer Tracing's OpenTelemetry bridge over the OpenTelemetry
 * SDK, every span exported to memory, behind an {@link ObservationRegistry}; W3C propagation for
 * sender observations (an HTTP client's {@code traceparent}).
 */
final class InMemoryTracing implements AutoCloseable {
    final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    final ObservationRegistry registry = ObservationRegistry.create();
    private final SdkTracerProvider provider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();

    InMemoryTracing() {
        io.opentelemetry.api.trace.Tracer otel = provider.get("test");
        OtelTracer tracer = new OtelTracer(otel, new OtelCurrentTraceContext(), event -> { });
        OtelPropagator propagator = new OtelPropagator(ContextPropagators.create(W3CTraceContextPropagator.getInstance()), otel);
        registry.observationConfig().observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
    }

    static String attr(SpanData span, String key) {
        return span.getAttributes().get(AttributeKey.stringKey(key));
    }

    /** The finished spans whose name starts with {@code prefix}, in the order they started. */
    List<SpanData> named(String prefix) {
        return exporter.getFinishedSpanItems().stream().filter(s -> s.getName().startsWith(prefix))
                .sorted(Comparator.comparing(SpanData::getStartEpochNanos)).toList();
    }

    @Override
    public void close() {
        provider.close();
    }
}
