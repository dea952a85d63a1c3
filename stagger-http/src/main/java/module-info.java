/** Retrying {@link java.net.http.HttpClient} calls safely. */
module dev.stagger.http {
    requires transitive dev.stagger.core;
    requires transitive java.net.http;
    requires static transitive org.jspecify; // the nullness annotations in the API: compile time only

    exports dev.stagger.http;
}
