package dev.stagger.idempotency;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.StoreException;
import dev.stagger.jdbc.UrlDataSource;
import org.junit.jupiter.api.Test;

/**
 * stagger-idempotency brings no JDBC driver: a store over a database whose driver the application
 * did not add fails at build() naming the artifact to add.
 */
class MissingDriverTest {

    @Test
    void aStoreWhoseDriverIsMissingFailsAtBuildNamingTheArtifact() {
        // H2 is not among this module's dependencies
        JdbcIdempotencyStore.Builder builder = JdbcIdempotencyStore.builder(UrlDataSource.of("jdbc:h2:mem:keys", null, null));
        assertThatThrownBy(builder::build)
                .isInstanceOf(StoreException.class)
                .hasRootCauseMessage("No suitable driver")
                .cause().hasMessageContaining("no JDBC driver for jdbc:h2 URLs: add com.h2database:h2");
    }
}
