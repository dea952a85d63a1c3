package dev.stagger.spring.app;

import dev.stagger.jdbc.testsupport.TestDatabases;
import dev.stagger.spring.StaggerRetry;
import dev.stagger.testing.VirtualClock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/** A service with a flaky downstream of its own (served by the same Tomcat on loopback). */
@SpringBootApplication
public class ShopApplication {

    @Bean
    VirtualClock clock() {
        return new VirtualClock();
    }

    @Bean
    DataSource dataSource() {
        return TestDatabases.postgres();
    }

    @Bean
    Inventory inventory() {
        return new Inventory();
    }

    /** A bean with a retried method. */
    public static class Inventory {
        private final AtomicInteger calls = new AtomicInteger();

        @StaggerRetry("inventory")
        public int reserve() {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("inventory busy");
            }
            return calls.get();
        }
    }

    /** The flaky downstream: each path fails its first request, telling the client when to come back. */
    @RestController
    public static class Downstream {
        final AtomicInteger charges = new AtomicInteger();
        final List<String> keys = new CopyOnWriteArrayList<>();
        final AtomicInteger orders = new AtomicInteger();

        @PostMapping("/downstream/charges")
        ResponseEntity<String> charge(@RequestHeader(name = "Idempotency-Key", required = false) String key,
                                      @RequestBody String body) {
            keys.add(String.valueOf(key));
            if (charges.incrementAndGet() % 2 == 1) {
                return ResponseEntity.status(503).header("Retry-After", "2").body("busy");
            }
            return ResponseEntity.status(201).body("charged " + body);
        }

        @GetMapping("/downstream/missing")
        ResponseEntity<String> missing() {
            charges.incrementAndGet();
            return ResponseEntity.status(404).body("no");
        }

        /** An endpoint protected by the idempotency filter. */
        @PostMapping("/orders")
        ResponseEntity<String> order(@RequestBody String body) {
            return ResponseEntity.status(201).body("order " + orders.incrementAndGet());
        }
    }
}
