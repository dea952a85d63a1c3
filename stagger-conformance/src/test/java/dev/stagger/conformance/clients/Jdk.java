package dev.stagger.conformance.clients;

import java.net.http.HttpClient;

/** The JDK client the JDK-backed kinds send with (Java 17's client cannot be closed: one for the suite). */
final class Jdk {
    /** HTTP/1.1, so the client never tries an h2c upgrade the test server does not speak. */
    static final HttpClient HTTP_11 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private Jdk() {
    }
}
