/**
 * Retrying grpc-java client calls with Stagger's engine: a {@link io.grpc.ClientInterceptor} with a
 * status table per method, {@code grpc-retry-pushback-ms}, the deadline and attempt propagated,
 * and the budget, breaker, throttle and hedging of a {@link dev.stagger.Retry}.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // grpc-api has no module descriptor
module dev.stagger.grpc {
    requires transitive dev.stagger.core;
    requires transitive dev.stagger.http; // the shared header names and rule vocabulary (StaggerHeaders, StatusTable.Rule)
    requires transitive io.grpc;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.grpc;
}
