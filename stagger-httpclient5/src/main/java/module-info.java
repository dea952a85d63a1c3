/** Stagger's HTTP retry rules for Apache HttpClient 5: a classic exec-chain handler and an async client wrapper. */
// httpclient5 and httpcore5 have no module descriptor; the name ends in the library's major version, as its own does
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic", "module"})
module dev.stagger.httpclient5 {
    requires transitive dev.stagger.http;
    requires transitive org.apache.httpcomponents.client5.httpclient5;
    requires transitive org.apache.httpcomponents.core5.httpcore5;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.httpclient5;
}
