package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoCommandTest {

    @Test
    void aPortInUseIsAOneLineErrorWithExitOne(@TempDir Path dir) throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            SimCliRunner.Outcome o = SimCliRunner.run("demo", "--port", Integer.toString(taken.getLocalPort()),
                    "--data-dir", dir.toString());
            assertThat(o.exitCode()).isEqualTo(1);
            assertThat(o.err().strip().lines()).hasSize(1);
            assertThat(o.err()).contains("stagger demo: cannot start on 127.0.0.1:" + taken.getLocalPort());
        }
    }

    @Test
    void aDataDirThatIsAFileIsAOneLineErrorWithExitOne(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("not-a-dir"), "x");
        SimCliRunner.Outcome o = SimCliRunner.run("demo", "--port", "0", "--data-dir", file.toString());
        assertThat(o.exitCode()).isEqualTo(1);
        assertThat(o.err().strip().lines()).hasSize(1);
        assertThat(o.err()).contains("--data-dir " + file);
    }

    @Test
    void aDataDirThatCannotBeCreatedSaysWhy() {
        SimCliRunner.Outcome o = SimCliRunner.run("demo", "--port", "0", "--data-dir", "/proc/nope");
        assertThat(o.exitCode()).isEqualTo(1);
        assertThat(o.err().strip().lines()).hasSize(1);
        // the path alone is no reason: something must follow it
        assertThat(o.err()).contains("--data-dir /proc/nope").containsPattern("/proc/nope: [a-z]+ [a-z]+");
    }

    @Test
    void aPortOutOfRangeIsABadArgument() {
        SimCliRunner.Outcome o = SimCliRunner.run("demo", "--port", "70000");
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("--port must be in [0, 65535], got 70000");
    }

    @Test
    void helpDocumentsTheExitCodes() {
        SimCliRunner.Outcome o = SimCliRunner.run("demo", "--help");
        assertThat(o.exitCode()).isZero();
        assertThat(o.out()).contains("Exit codes:").contains("could not start");
    }
}
