package dev.stagger.spring;

import dev.stagger.http.RetryingHttpClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.http.client.HttpComponentsClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.autoconfigure.ClientHttpRequestFactoryBuilderCustomizer;
import org.springframework.boot.http.client.autoconfigure.reactive.ClientHttpConnectorBuilderCustomizer;
import org.springframework.boot.http.client.reactive.HttpComponentsClientHttpConnectorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * One retrying layer under Apache HttpClient 5: the request factories and connectors Spring Boot
 * builds on HttpClient 5 (for {@code RestClient}, {@code RestTemplate} and {@code WebClient}) are
 * built with HttpClient's own retries off ({@code disableAutomaticRetries()}). HttpClient's
 * {@code DefaultHttpRequestRetryStrategy} resends a request once after some I/O errors and after a
 * 429 or 503, without budget or deadline; under Stagger's interceptor or filter each attempt would
 * then be two, and every failure retried by both layers.
 */
@AutoConfiguration(after = StaggerHttpAutoConfiguration.class)
@ConditionalOnClass({RetryingHttpClient.class, HttpClientBuilder.class, ClientHttpRequestFactoryBuilderCustomizer.class})
public class StaggerHttpComponentsAutoConfiguration {

    /** HttpClient 5 request factories (RestClient, RestTemplate) without HttpClient's own retries. */
    @Bean
    @ConditionalOnClass(HttpComponentsClientHttpRequestFactoryBuilder.class)
    ClientHttpRequestFactoryBuilderCustomizer<HttpComponentsClientHttpRequestFactoryBuilder> staggerHttpComponentsRetriesOff() {
        return builder -> builder.withHttpClientCustomizer(HttpClientBuilder::disableAutomaticRetries);
    }

    /** HttpClient 5 connectors (WebClient) without HttpClient's own retries. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({HttpComponentsClientHttpConnectorBuilder.class, HttpAsyncClientBuilder.class})
    static class Reactive {
        @Bean
        ClientHttpConnectorBuilderCustomizer<HttpComponentsClientHttpConnectorBuilder> staggerHttpComponentsAsyncRetriesOff() {
            return builder -> builder.withHttpClientCustomizer(HttpAsyncClientBuilder::disableAutomaticRetries);
        }
    }
}
