package dev.stagger.feign;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.http.RetryingHttpClient;
import feign.Client;
import feign.Retryer;
import org.junit.jupiter.api.Test;

class RetryingCapabilityTest {
    private final RetryingCapability capability = RetryingCapability.of(RetryingHttpClient.builder().service("orders").build());

    @Test
    void replacesAnyRetryerWithOneThatNeverRetries() {
        assertThat(capability.enrich(new Retryer.Default())).isSameAs(Retryer.NEVER_RETRY);
    }

    @Test
    void decoratesTheClientOnceWhenAppliedTwice() {
        Client once = capability.enrich(new Client.Default(null, null));

        assertThat(capability.enrich(once)).isSameAs(once);
        assertThat(once).isNotInstanceOf(Client.Default.class);
    }
}
