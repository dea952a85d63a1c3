package dev.stagger.spring;

import dev.stagger.kafka.KafkaRetryConsumer;
import dev.stagger.spring.internal.ParallelStop;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.SmartLifecycle;

/**
 * The Kafka consumers of {@code stagger.kafka.consumers}, started and stopped with the application
 * context.
 *
 * <p>The consumers are built once every singleton is ready (a missing handler bean or a bad value
 * fails startup, naming the property), and started in lifecycle phase {@code stagger.kafka.phase}
 * (default {@link SmartLifecycle#DEFAULT_PHASE}: after the web server, and stopped before it).
 * Starting a consumer creates its missing topics, so a broker that cannot be reached fails
 * startup. Stop: gracefully, all consumers at once: each hands out no more records, lets running
 * handlers finish for its shutdown timeout (30 s by default; their records are settled and
 * committed), then commits and closes. Keep Spring's {@code spring.lifecycle.timeout-per-shutdown-phase}
 * (30 s) above the longest shutdown timeout.
 *
 * <p>Thread-safe.
 */
public final class StaggerKafkaConsumers implements SmartLifecycle, SmartInitializingSingleton {
    private final Supplier<Map<String, KafkaRetryConsumer>> builder;
    private final int phase;
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile Map<String, KafkaRetryConsumer> consumers = Map.of();

    StaggerKafkaConsumers(Supplier<Map<String, KafkaRetryConsumer>> builder, int phase) {
        this.builder = builder;
        this.phase = phase;
    }

    @Override
    public void afterSingletonsInstantiated() {
        consumers = Collections.unmodifiableMap(builder.get());
    }

    /** The consumers by name (empty until every singleton of the context is ready). */
    public Map<String, KafkaRetryConsumer> consumers() {
        return consumers;
    }

    @Override
    public void start() {
        if (!running.compareAndSet(false, true)) {
            return;
        }
        List<KafkaRetryConsumer> started = new ArrayList<>();
        try {
            for (KafkaRetryConsumer c : consumers.values()) {
                c.start();
                started.add(c);
            }
        } catch (RuntimeException e) {
            started.forEach(KafkaRetryConsumer::close); // no consumer left running by a startup that failed
            throw e;
        }
    }

    @Override
    public void stop() {
        ParallelStop.await(this::stop);
    }

    /** Closes every consumer at once, each on a thread of its own, and reports when all are done. */
    @Override
    public void stop(Runnable callback) {
        Map<String, Runnable> closers = new LinkedHashMap<>();
        consumers.forEach((name, consumer) -> closers.put(name, consumer::close)); // each its shutdown timeout at most
        ParallelStop.run("stagger-kafka", running, closers, callback);
    }

    @Override
    public boolean isRunning() {
        return running.get();
    }

    @Override
    public int getPhase() {
        return phase;
    }

    @Override
    public String toString() {
        return "StaggerKafkaConsumers" + consumers.keySet();
    }
}
