package dev.stagger.spring.cloud;

import dev.stagger.spring.StaggerHttpAutoConfiguration;
import dev.stagger.spring.cloud.internal.FeignClientRetries;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.openfeign.FeignClientSpecification;
import org.springframework.context.annotation.Bean;

/**
 * Spring Cloud OpenFeign clients retried by Stagger, configured per client from properties:
 * {@code stagger.feign.clients.<feign client name>=<name under stagger.http.clients>} (a Feign
 * client whose name is itself listed under {@code stagger.http.clients} needs no entry). Each such
 * client gets a {@link dev.stagger.feign.RetryingCapability} with that HTTP client's rules (status
 * table, Retry-After, keys, breaker, budget, throttle), and Feign's own {@code Retryer} is set to
 * never retry: one retrying layer. A client with neither entry is left as it is.
 *
 * <p>It works as a default Feign configuration ({@code FeignClientSpecification} named
 * {@code default.*}), which Spring Cloud OpenFeign puts in every client's own context, where the
 * client's name is known.
 */
@AutoConfiguration(after = StaggerHttpAutoConfiguration.class)
@ConditionalOnClass(name = {"org.springframework.cloud.openfeign.FeignClientSpecification",
        "dev.stagger.feign.RetryingCapability", "dev.stagger.spring.StaggerHttp"})
@EnableConfigurationProperties(StaggerFeignProperties.class)
public class StaggerOpenFeignAutoConfiguration {

    /** Puts {@link FeignClientRetries} in every Feign client's context. */
    @Bean
    public static FeignClientSpecification staggerFeignClientSpecification() {
        return new FeignClientSpecification("default." + StaggerOpenFeignAutoConfiguration.class.getName(),
                StaggerOpenFeignAutoConfiguration.class.getName(), new Class<?>[] {FeignClientRetries.class});
    }
}
