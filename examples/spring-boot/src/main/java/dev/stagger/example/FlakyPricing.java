package dev.stagger.example;

import java.util.concurrent.atomic.AtomicLong;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * The downstream: a pricing service that is busy for one request in every
 * {@code shop.pricing.fail-every} (default 2), answering 503 with {@code Retry-After: 1}. It lives
 * in the same application only so that the example starts with one command.
 */
@RestController
public class FlakyPricing {
    private final AtomicLong requests = new AtomicLong();
    private final int failEvery;

    public FlakyPricing(@Value("${shop.pricing.fail-every:2}") int failEvery) {
        this.failEvery = failEvery;
    }

    @GetMapping("/pricing/{sku}")
    public ResponseEntity<String> price(@PathVariable String sku) {
        if (failEvery > 0 && requests.incrementAndGet() % failEvery == 1) {
            return ResponseEntity.status(503).header("Retry-After", "1").body("busy");
        }
        return ResponseEntity.ok(Integer.toString(100 + Math.floorMod(sku.hashCode(), 900)));
    }
}
