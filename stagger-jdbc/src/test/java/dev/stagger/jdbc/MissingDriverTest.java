package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * Stagger brings no JDBC driver (the drivers are optional dependencies): a data source whose
 * driver is missing says which artifact to add, instead of DriverManager's "No suitable driver".
 */
class MissingDriverTest {

    @Test
    void aUrlWhoseDriverIsMissingNamesTheArtifactToAdd() {
        // H2 is not among this module's dependencies
        UrlDataSource ds = UrlDataSource.of("jdbc:h2:mem:stagger", null, null);
        assertThatThrownBy(ds::getConnection)
                .isInstanceOf(SQLException.class)
                .hasMessage("no JDBC driver for jdbc:h2 URLs: add com.h2database:h2 to the application's"
                        + " dependencies (Stagger does not bring one)");
    }

    @Test
    void anUnknownDatabaseIsNamedByItsSubprotocol() {
        UrlDataSource ds = UrlDataSource.of("jdbc:nosuchdb://localhost/x", "u", "p");
        assertThatThrownBy(ds::getConnection)
                .isInstanceOf(SQLException.class)
                .hasMessageStartingWith("no JDBC driver for jdbc:nosuchdb URLs: add the database's JDBC driver");
    }
}
