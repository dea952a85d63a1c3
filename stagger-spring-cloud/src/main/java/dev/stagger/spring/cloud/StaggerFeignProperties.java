package dev.stagger.spring.cloud;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code stagger.feign.*}: which of Stagger's HTTP clients ({@code stagger.http.clients.<name>})
 * retries each Spring Cloud OpenFeign client.
 */
@ConfigurationProperties(prefix = "stagger.feign")
public class StaggerFeignProperties {
    /** Feign client name (as in {@code @FeignClient(name = ...)}) to the Stagger HTTP client whose rules it uses. */
    private Map<String, String> clients = new LinkedHashMap<>();

    public Map<String, String> getClients() {
        return clients;
    }

    public void setClients(Map<String, String> clients) {
        this.clients = clients;
    }
}
