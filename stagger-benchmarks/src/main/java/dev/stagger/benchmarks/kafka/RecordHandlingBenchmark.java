package dev.stagger.benchmarks.kafka;

import dev.stagger.Backoff;
import dev.stagger.Clock;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.RetryStep;
import dev.stagger.kafka.KafkaHandler;
import dev.stagger.kafka.internal.RecordProcessor;
import dev.stagger.kafka.internal.TopicSet;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the Kafka consumer does on a handler thread for a record whose handler succeeds at once,
 * without the broker: {@code processor} runs a first delivery (no headers) through
 * {@link RecordProcessor#handle} (the message built, the handler run in its retry scope, the
 * outcome told), {@code direct} hands the same record's value to the same handler directly. The
 * difference is the consumer's cost per record on its handler threads, next to the poll thread's
 * and the broker's in {@link KafkaThroughput}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RecordHandlingBenchmark {
    private ConsumerRecord<byte[], byte[]> record;
    private RecordProcessor processor;
    private Blackhole sink;
    private final KafkaHandler handler = m -> sink.consume(m.value());

    @Setup
    public void setUp(Blackhole blackhole) {
        sink = blackhole;
        record = new ConsumerRecord<>("orders", 0, 42L, new byte[] {1}, new byte[64]);
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build();
        Clock clock = Clock.system();
        processor = new RecordProcessor(new TopicSet("orders", new long[] {10}),
                new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer()),
                new RetryStep("orders", policy, clock, RandomSource.threadLocal(), Nesting.DEFER), handler, clock,
                RandomSource.threadLocal(), 1_000, Duration.ofDays(1).toMillis(), () -> { }, () -> false, () -> false,
                (r, outcome, attempt, firstAt, nanos, delay, reason, failure) -> { });
        if (processor.handle(record, null) != RecordProcessor.Outcome.SUCCEEDED) {
            throw new IllegalStateException("the measured path is a record that succeeds at once");
        }
    }

    @Benchmark
    public void direct() throws Exception {
        sink.consume(record.value());
    }

    @Benchmark
    public Object processor() {
        return processor.handle(record, null);
    }
}
