package dev.stagger.conformance;

import dev.stagger.conformance.clients.ApacheAsyncClient;
import dev.stagger.conformance.clients.ApacheClassicClient;
import dev.stagger.conformance.clients.FeignClient;
import dev.stagger.conformance.clients.JdkClient;
import dev.stagger.conformance.clients.OkHttpClientKind;
import dev.stagger.conformance.clients.RestClientKind;
import dev.stagger.conformance.clients.RestTemplateKind;
import dev.stagger.conformance.clients.WebClientKind;
import java.util.List;

/** Every client Stagger supports: the one list the suite runs over. */
public final class Clients {
    public static final List<ClientUnderTest> ALL = List.of(
            new JdkClient(),
            new RestClientKind(),
            new RestTemplateKind(),
            new WebClientKind(),
            new OkHttpClientKind(),
            new ApacheClassicClient(),
            new ApacheAsyncClient(),
            new FeignClient());

    private Clients() {
    }
}
