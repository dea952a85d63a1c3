package dev.stagger.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.StoreException;
import dev.stagger.testsupport.jdbc.TestDatabases;
import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteInboxTest extends InboxContract {
    @TempDir
    Path dir;

    @Override
    DataSource dataSource() {
        return SqliteDataSource.file(dir.resolve("inbox.db"));
    }
}

