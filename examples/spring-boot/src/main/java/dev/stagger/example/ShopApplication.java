package dev.stagger.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small shop: quotes read from a flaky pricing service over HTTP (retried by Stagger's
 * RestClient interceptor, honouring its Retry-After), orders written in retried transactions,
 * receipts sent by a durable job. Everything Stagger does shows at {@code /actuator/stagger} and
 * {@code /actuator/prometheus}.
 */
@SpringBootApplication
public class ShopApplication {
    public static void main(String[] args) {
        SpringApplication.run(ShopApplication.class, args);
    }
}
