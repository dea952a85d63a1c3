/** A RabbitMQ consumer with delayed retries and dead letters. */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // amqp-client has no module descriptor
module dev.stagger.rabbitmq {
    requires transitive dev.stagger.core;
    requires transitive com.rabbitmq.client;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.rabbitmq;
}
