package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The IDE metadata Boot's processor writes for the starter: every property, and the hints merged into it. */
class ConfigurationMetadataTest {
    private static String metadata() throws Exception {
        try (InputStream in = ConfigurationMetadataTest.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("META-INF/spring-configuration-metadata.json on the class path").isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void everyTopLevelPropertyIsDocumented() throws Exception {
        List<String> names = JsonPath.read(metadata(), "$.properties[*].name");
        assertThat(names).contains("stagger.retries", "stagger.circuit-breakers", "stagger.budgets", "stagger.http.clients",
                "stagger.jobs.enabled", "stagger.jobs.schema-mode", "stagger.jobs.phase", "stagger.jobs.pools",
                "stagger.spring-retry.template", "stagger.spring-retry.annotations", "stagger.spring-retry.retry",
                "stagger.idempotency.store", "stagger.health.circuit-breaker-status");
        List<String> undocumented = JsonPath.read(metadata(), "$.properties[?(@.name =~ /stagger\\..*/ && !@.description)].name");
        assertThat(undocumented).isEmpty();
    }

    @Test
    void theMapsOfNamedInstancesOfferTheDefaultEntryAndEnumeratedValuesTheirChoices() throws Exception {
        List<String> hints = JsonPath.read(metadata(), "$.hints[*].name");
        assertThat(hints).contains("stagger.retries.keys", "stagger.jobs.pools.keys", "stagger.idempotency.store",
                "stagger.jobs.schema-mode", "stagger.health.circuit-breaker-status.keys");
        List<String> stores = JsonPath.read(metadata(), "$.hints[?(@.name == 'stagger.idempotency.store')].values[*].value");
        assertThat(stores).containsExactly("jdbc", "memory");
    }
}
