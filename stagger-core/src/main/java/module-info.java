/**
 * Stagger's core: retries, backoff with jitter, classification, deadlines, retry budgets and
 * circuit breakers, with no dependency beyond the JDK.
 */
@SuppressWarnings("module") // qualified exports name Stagger modules that are compiled later
module dev.stagger.core {
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger;
    exports dev.stagger.testing;

    // the argument checks (Checks) and shared mechanics: every Stagger module that needs them, no one else
    exports dev.stagger.internal to dev.stagger.http, dev.stagger.jobs, dev.stagger.idempotency,
            dev.stagger.observability, dev.stagger.rabbitmq, dev.stagger.kafka, dev.stagger.shedding, dev.stagger.sim, dev.stagger.grpc;
}
