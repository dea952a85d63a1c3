/**
 * Retrying {@link java.net.http.HttpClient} calls safely, and the server half of Stagger's HTTP
 * headers (a servlet filter; the servlet API is provided by the container).
 */
@SuppressWarnings("module") // a qualified export names Stagger modules compiled later
module dev.stagger.http {
    requires transitive dev.stagger.core;
    requires transitive java.net.http;
    requires static transitive jakarta.servlet; // the deadline filter only: provided by the container
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.http;
    exports dev.stagger.http.servlet;
    // one rule for what a blocking client integration throws (BlockingFailures): those modules, no one else
    exports dev.stagger.http.internal to dev.stagger.okhttp, dev.stagger.httpclient5, dev.stagger.feign;
}
