package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jobs.JobQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An application injecting a bean of a feature that is off: the start-up failure report names the
 * property that turns the feature on, as {@code SpringApplication} prints it.
 */
@ExtendWith(OutputCaptureExtension.class)
class FeatureSwitchFailureAnalysisTest {

    /** Sends mail through a job queue. */
    public static class Mailer {
        Mailer(JobQueue queue) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({StaggerAutoConfiguration.class, StaggerJobsAutoConfiguration.class})
    static class App {
        @Bean
        Mailer mailer(JobQueue queue) {
            return new Mailer(queue);
        }
    }

    @Test
    void injectingTheJobQueueWithJobsOffFailsNamingStaggerJobsEnabled(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("spring.main.banner-mode=off").run().close()).isNotNull();

        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("A bean of type dev.stagger.jobs.JobQueue was required, but Stagger creates it only when "
                        + "stagger.jobs.enabled=true")
                .contains("Set stagger.jobs.enabled=true");
    }
}
