package dev.stagger.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Decision;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** gRFC A6's {@code grpc-retry-pushback-ms}, value by value. */
class GrpcClassifierTest {

    @Test
    void aPushbackIsTheLeastWait() {
        assertThat(GrpcClassifier.pushback("250").minDelay()).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void noPushbackLeavesTheWaitToTheBackoff() {
        assertThat(GrpcClassifier.pushback(null)).isEqualTo(Decision.retry());
        assertThat(GrpcClassifier.pushback("0")).isEqualTo(Decision.retry());
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "-0", "soon", "1.5", "", "12ms", "1234567890123456789"})
    void aNegativeOrMalformedPushbackStopsRetrying(String value) {
        assertThat(GrpcClassifier.pushback(value)).isEqualTo(Decision.stop());
    }
}
