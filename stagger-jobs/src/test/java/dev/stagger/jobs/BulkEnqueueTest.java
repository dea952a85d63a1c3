package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link JobQueue#enqueueAll}: on PostgreSQL jobs without a key go in as multi-row INSERTs (one
 * array per column), keyed ones one by one; on SQLite one statement per job. Either way every job
 * keeps its own options and the ids come back in request order.
 */
class BulkEnqueueTest {
    @TempDir
    Path dir;
    final VirtualClock clock = new VirtualClock();
    DataSource ds;
    String prefix;
    JobQueue jobs;

    private void open(String database) throws SQLException {
        Stores.Opened opened = Stores.open(database, dir, clock);
        ds = opened.dataSource();
        prefix = opened.prefix();
        jobs = opened.jobs();
    }

    @AfterEach
    void tearDown() throws SQLException {
        if (jobs != null && jobs.tables().dialect() == dev.stagger.jdbc.internal.Dialect.POSTGRESQL) {
            Stores.dropPostgres(ds, prefix);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void everyJobOfABulkEnqueueKeepsItsOwnOptions(String database) throws Exception {
        open(database);
        Instant at = Instant.ofEpochMilli(clock.currentTimeMillis()).plusSeconds(3600);
        List<JobRequest> requests = List.of(
                JobRequest.of("mail", "send", "a"),
                JobRequest.of("mail", "send", "b").with(EnqueueOptions.defaults().delay(Duration.ofSeconds(5)).priority(7)),
                new JobRequest("bills", "charge", new byte[0], EnqueueOptions.defaults().maxAttempts(2)),
                JobRequest.of("mail", "send", "d").with(EnqueueOptions.defaults().key("once")),
                JobRequest.of("bills", "refund", "e").with(EnqueueOptions.defaults().runAt(at).priority(-3)));

        List<Long> ids = jobs.enqueueAll(requests);

        long now = clock.currentTimeMillis();
        List<Job> stored = ids.stream().map(id -> jobs.admin().find(id).orElseThrow()).toList();
        assertThat(stored).extracting(Job::queue).containsExactly("mail", "mail", "bills", "mail", "bills");
        assertThat(stored).extracting(Job::type).containsExactly("send", "send", "charge", "send", "refund");
        assertThat(stored).extracting(Job::payloadText).containsExactly("a", "b", "", "d", "e");
        assertThat(stored).extracting(Job::priority).containsExactly(0, 7, 0, 0, -3);
        assertThat(stored).extracting(Job::maxAttempts).containsExactly(0, 0, 2, 0, 0);
        assertThat(stored).extracting(j -> j.runAt().toEpochMilli()).containsExactly(now, now + 5000, now, now,
                at.toEpochMilli());
        assertThat(stored).extracting(Job::state).containsOnly(JobState.AVAILABLE);
        assertThat(stored.get(3).jobKey()).contains("once");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgresql"})
    void aBulkEnqueueLargerThanOneStatementReturnsEveryIdInRequestOrder(String database) throws Exception {
        open(database);
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < 5003; i++) {
            requests.add(JobRequest.of("q", "work", "job-" + i));
        }

        List<Long> ids = jobs.enqueueAll(requests);

        Map<Long, String> payloads = new LinkedHashMap<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, payload FROM " + prefix + "jobs")) {
            while (rs.next()) {
                payloads.put(rs.getLong(1), new String(rs.getBytes(2), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        assertThat(ids).hasSize(5003).doesNotHaveDuplicates();
        for (int i = 0; i < ids.size(); i++) {
            assertThat(payloads.get(ids.get(i))).as("job %d", i).isEqualTo("job-" + i);
        }
    }
}
