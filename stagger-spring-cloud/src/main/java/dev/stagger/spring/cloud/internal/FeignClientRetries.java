package dev.stagger.spring.cloud.internal;

import dev.stagger.feign.RetryingCapability;
import dev.stagger.spring.StaggerHttp;
import dev.stagger.spring.StaggerProperties;
import dev.stagger.spring.cloud.StaggerFeignProperties;
import feign.Capability;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The configuration Spring Cloud OpenFeign puts in each Feign client's own context: the client's
 * name is there ({@value #CLIENT_NAME}), so the capability is that client's.
 */
@Configuration(proxyBeanMethods = false)
public class FeignClientRetries {
    /** The property Spring Cloud OpenFeign sets in a client's context to the client's name. */
    static final String CLIENT_NAME = "spring.cloud.openfeign.client.name";

    /** Nothing changed: a Feign client no Stagger HTTP client is named for. */
    private static final Capability NONE = new Capability() {
    };

    @Bean
    Capability staggerFeignRetries(Environment environment, ObjectProvider<StaggerHttp> http,
                                   ObjectProvider<StaggerFeignProperties> feign, ObjectProvider<StaggerProperties> stagger) {
        String client = environment.getProperty(CLIENT_NAME);
        String rules = rulesFor(client, feign.getIfAvailable(), stagger.getIfAvailable());
        StaggerHttp clients = http.getIfAvailable();
        if (rules == null || clients == null) {
            return NONE;
        }
        return RetryingCapability.of(clients.client(rules));
    }

    /** The Stagger HTTP client retrying Feign client {@code client}, or null for none. */
    static @Nullable String rulesFor(@Nullable String client, @Nullable StaggerFeignProperties feign,
                                     @Nullable StaggerProperties stagger) {
        if (client == null) {
            return null;
        }
        String mapped = feign == null ? null : feign.getClients().get(client);
        if (mapped != null) {
            return mapped;
        }
        return stagger != null && stagger.getHttp().getClients().containsKey(client) ? client : null;
    }
}
