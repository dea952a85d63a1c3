/** Retrying {@link java.net.http.HttpClient} calls safely. */
module dev.stagger.http {
    requires transitive dev.stagger.core;
    requires transitive java.net.http;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.http;
}
