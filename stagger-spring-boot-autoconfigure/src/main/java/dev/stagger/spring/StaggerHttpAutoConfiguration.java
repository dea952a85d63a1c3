package dev.stagger.spring;

import dev.stagger.http.RetryingHttpClient;
import dev.stagger.spring.internal.AttemptSpans;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.client.ClientHttpRequestInterceptor;

/**
 * Named HTTP clients for Spring's {@code RestClient}, {@code RestTemplate} and {@code WebClient}.
 * With {@code stagger.http.builders=<client>}, every builder Boot hands out gets that client's
 * retries (added last among interceptors and filters).
 */
@AutoConfiguration(after = StaggerAutoConfiguration.class)
@ConditionalOnClass({RetryingHttpClient.class, ClientHttpRequestInterceptor.class})
public class StaggerHttpAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public StaggerHttp staggerHttp(StaggerRegistry registry, StaggerProperties properties,
                                   ConfigurableListableBeanFactory beans) {
        // each attempt its own client span when the observability auto-configuration made them
        return new StaggerHttp(registry.factory(), registry, properties.getHttp().getClients().keySet(),
                beans.getBeanProvider(AttemptSpans.class).getIfAvailable(() -> AttemptSpans.NONE));
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RestClientCustomizer.class)
    @ConditionalOnProperty(prefix = "stagger.http", name = "builders")
    static class Builders {
        @Bean
        @Order(Ordered.LOWEST_PRECEDENCE)
        RestClientCustomizer staggerRestClientCustomizer(StaggerHttp http, StaggerProperties properties) {
            return builder -> builder.requestInterceptor(http.interceptor(builders(properties)));
        }

        @Bean
        @Order(Ordered.LOWEST_PRECEDENCE)
        RestTemplateCustomizer staggerRestTemplateCustomizer(StaggerHttp http, StaggerProperties properties) {
            return template -> template.getInterceptors().add(http.interceptor(builders(properties)));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.web.reactive.function.client.WebClient")
    static class Reactive {
        @Bean
        @ConditionalOnMissingBean
        StaggerWebClient staggerWebClient(StaggerHttp http) {
            return new StaggerWebClient(http);
        }

        /**
         * A class of its own: Spring WebFlux without Boot's WebClient module (Spring Cloud Gateway's
         * server, say) has no {@code WebClientCustomizer}, and a bean method returning one would
         * make this whole class fail to load.
         */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(WebClientCustomizer.class)
        @ConditionalOnProperty(prefix = "stagger.http", name = "builders")
        static class Builders {
            @Bean
            @Order(Ordered.LOWEST_PRECEDENCE)
            WebClientCustomizer staggerWebClientCustomizer(StaggerWebClient webClient, StaggerProperties properties) {
                return builder -> builder.filter(webClient.filter(builders(properties)));
            }
        }
    }

    /** stagger.http.builders, which the configurations that use it are conditional on. */
    private static String builders(StaggerProperties properties) {
        return java.util.Objects.requireNonNull(properties.getHttp().getBuilders(), "stagger.http.builders");
    }
}
