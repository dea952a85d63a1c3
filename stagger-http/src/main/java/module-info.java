/** Retrying {@link java.net.http.HttpClient} calls safely. */
module dev.stagger.http {
    requires transitive dev.stagger.core;
    requires transitive java.net.http;
    requires static org.jspecify;

    exports dev.stagger.http;
}
