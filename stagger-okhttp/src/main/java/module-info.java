/** Stagger's HTTP retry rules for OkHttp 5 calls: an application interceptor. */
module dev.stagger.okhttp {
    requires transitive dev.stagger.http;
    requires transitive okhttp3;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.okhttp;
}
