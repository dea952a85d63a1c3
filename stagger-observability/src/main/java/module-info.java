/**
 * Logging, Micrometer metrics and Micrometer observations (traces) for Stagger's events. The listeners for the optional modules
 * (HTTP, RabbitMQ, Kafka, jobs, idempotency, shedding) need those modules only when they are used.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // micrometer-core has no module descriptor
module dev.stagger.observability {
    requires transitive dev.stagger.core;
    requires transitive micrometer.core;
    requires transitive micrometer.observation;
    requires micrometer.commons;
    requires static context.propagation; // only for CallerContext
    requires static java.net.http; // only for ObservedHttpClient; its users have it already
    requires transitive org.slf4j;
    requires static transitive dev.stagger.http;
    requires static transitive dev.stagger.rabbitmq;
    requires static transitive dev.stagger.kafka;
    requires static transitive dev.stagger.jobs;
    requires static transitive dev.stagger.idempotency;
    requires static transitive dev.stagger.shedding;
    requires static jakarta.servlet;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.observability;
}
