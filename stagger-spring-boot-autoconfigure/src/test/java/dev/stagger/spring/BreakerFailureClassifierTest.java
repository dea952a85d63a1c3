package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.CircuitBreaker;
import dev.stagger.spring.BreakerFailureClassifier.Verdict;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.annotation.Order;

/**
 * {@link BreakerFailureClassifier} beans decide how a named breaker counts an exception before its
 * {@code record-exceptions} / {@code ignore-exceptions}: here by a vendor's error code, which no list
 * of classes can express.
 */
class BreakerFailureClassifierTest {
    /** A vendor's exception whose meaning is its code. */
    static final class VendorException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int code;

        VendorException(int code) {
            super("vendor error " + code);
            this.code = code;
        }
    }

    /** 429 is the vendor being overloaded, 400 the caller's mistake; any other code is left to the properties. */
    static final BreakerFailureClassifier BY_VENDOR_CODE = (breaker, failure) -> {
        if (failure instanceof VendorException v) {
            return v.code == 429 ? Verdict.FAILURE : v.code == 400 ? Verdict.IGNORED : Verdict.UNDECIDED;
        }
        return Verdict.UNDECIDED;
    };

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class))
            .withBean(BreakerFailureClassifier.class, () -> BY_VENDOR_CODE)
            .withPropertyValues("stagger.circuit-breakers.vendor.consecutive-failures=2",
                    "stagger.circuit-breakers.vendor.record-exceptions=java.io.IOException");

    private static CircuitBreaker vendor(ConfigurableApplicationContext context) {
        return context.getBean(StaggerRegistry.class).circuitBreaker("vendor");
    }

    private static void failWith(CircuitBreaker breaker, Exception failure) {
        try {
            breaker.call(() -> {
                throw failure;
            });
        } catch (Exception expected) {
            // recorded as the classifier or the properties say
        }
    }

    @Test
    void aFailureVerdictCountsAnExceptionTheRecordListDoesNotName() {
        runner.run(context -> {
            CircuitBreaker breaker = vendor(context);
            failWith(breaker, new VendorException(429));
            failWith(breaker, new VendorException(429));
            assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
        });
    }

    @Test
    void anIgnoredVerdictCountsTheCallAsNeitherSuccessNorFailure() {
        runner.run(context -> {
            CircuitBreaker breaker = vendor(context);
            failWith(breaker, new IOException("down"));
            failWith(breaker, new VendorException(400));
            assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
            failWith(breaker, new IOException("down"));
            assertThat(breaker.state()).as("the ignored call did not end the streak").isEqualTo(CircuitBreaker.State.OPEN);
        });
    }

    @Test
    void anUndecidedVerdictLeavesTheExceptionToTheBreakersProperties() {
        runner.run(context -> {
            CircuitBreaker breaker = vendor(context);
            failWith(breaker, new IOException("down"));
            failWith(breaker, new VendorException(503)); // undecided, and not in record-exceptions: a success
            failWith(breaker, new IOException("down"));
            assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
        });
    }

    @Test
    void theFirstClassifierInOrderWithAVerdictDecides() {
        runner.withBean("everythingIgnored", BreakerFailureClassifier.class, IgnoringAll::new).run(context -> {
            CircuitBreaker breaker = vendor(context);
            failWith(breaker, new VendorException(429));
            failWith(breaker, new VendorException(429));
            assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
        });
    }

    /** Ordered before the vendor classifier (which has no order). */
    @Order(1)
    static final class IgnoringAll implements BreakerFailureClassifier {
        @Override
        public Verdict classify(String circuitBreaker, Throwable failure) {
            return Verdict.IGNORED;
        }
    }
}
