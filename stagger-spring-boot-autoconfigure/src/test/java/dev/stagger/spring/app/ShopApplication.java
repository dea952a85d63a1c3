package dev.stagger.spring.app;

import dev.stagger.testsupport.jdbc.TestDatabases;
import dev.stagger.spring.StaggerRetry;
import dev.stagger.testing.VirtualClock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configurers.AbstractHttpConfigurer;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A service with a flaky downstream of its own (served by the same Tomcat on loopback), behind
 * Spring Security: every path is open, and a client that logs in with HTTP Basic is a principal.
 */
@SpringBootApplication
public class ShopApplication {

    /** An API: no CSRF tokens; nothing requires a login, but a client that sends one is known. */
    @Bean
    SecurityFilterChain api(HttpSecurity http) throws Exception {
        return http.csrf(AbstractHttpConfigurer::disable)
                .authorizeHttpRequests(requests -> requests.anyRequest().permitAll())
                .httpBasic(Customizer.withDefaults())
                .build();
    }

    @Bean
    UserDetailsService clients() {
        return new InMemoryUserDetailsManager(
                User.withUsername("alice").password("{noop}alice-secret").roles("CLIENT").build(),
                User.withUsername("bob").password("{noop}bob-secret").roles("CLIENT").build());
    }

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

    @Bean
    Catalog catalog() {
        return new Catalog();
    }

    /**
     * A bean with retried asynchronous and Reactor methods, each failing its first attempt. Its
     * counters are read through methods: the bean is a class proxy, whose own fields are not the
     * target's.
     */
    public static class Catalog {
        private final AtomicInteger prices = new AtomicInteger();
        private final AtomicInteger stocks = new AtomicInteger();
        private final AtomicInteger variants = new AtomicInteger();

        public void reset() {
            prices.set(0);
            stocks.set(0);
            variants.set(0);
        }

        /** Invocations of {@link #price}, subscriptions to {@link #stock} and to {@link #variants}. */
        public List<Integer> attempts() {
            return List.of(prices.get(), stocks.get(), variants.get());
        }

        @StaggerRetry("inventory")
        public CompletableFuture<String> price(String sku) {
            int n = prices.incrementAndGet();
            return n == 1 ? CompletableFuture.failedFuture(new IllegalStateException("pricing busy"))
                    : CompletableFuture.completedFuture(sku + " costs 9.99 (attempt " + n + ")");
        }

        @StaggerRetry("inventory")
        public Mono<String> stock(String sku) {
            return Mono.defer(() -> {
                int n = stocks.incrementAndGet();
                return n == 1 ? Mono.error(new IllegalStateException("stock busy"))
                        : Mono.just(sku + ": 3 in stock (subscription " + n + ")");
            });
        }

        @StaggerRetry("inventory")
        public Flux<String> variants(String sku) {
            return Flux.defer(() -> {
                int n = variants.incrementAndGet();
                return n == 1 ? Flux.concat(Flux.just(sku + "-red"), Flux.error(new IllegalStateException("variants busy")))
                        : Flux.just(sku + "-red", sku + "-blue");
            });
        }
    }

    /** The catalog over HTTP: Spring MVC's asynchronous request handling around the retried methods. */
    @RestController
    public static class CatalogController {
        private final Catalog catalog;

        CatalogController(Catalog catalog) {
            this.catalog = catalog;
        }

        @GetMapping("/catalog/{sku}/price")
        CompletableFuture<String> price(@PathVariable String sku) {
            return catalog.price(sku);
        }

        @GetMapping("/catalog/{sku}/stock")
        Mono<String> stock(@PathVariable String sku) {
            return catalog.stock(sku);
        }

        /** Collected: a streamed Flux would already have sent what a failed attempt emitted. */
        @GetMapping("/catalog/{sku}/variants")
        Mono<List<String>> variants(@PathVariable String sku) {
            return catalog.variants(sku).collectList();
        }
    }

    @Bean
    Reports reports() {
        return new Reports();
    }

    /** A bean whose retried method always fails: every call ends with the retry giving up. */
    public static class Reports {
        private final AtomicInteger attempts = new AtomicInteger();

        public int attempts() {
            return attempts.get();
        }

        public void reset() {
            attempts.set(0);
        }

        @StaggerRetry("reports")
        public String build() {
            attempts.incrementAndGet();
            throw new IllegalStateException("reports down");
        }
    }

    /** The reports over HTTP: the failure leaves the controller, and Boot's error page answers it. */
    @RestController
    public static class ReportsController {
        private final Reports reports;

        ReportsController(Reports reports) {
            this.reports = reports;
        }

        @GetMapping("/reports")
        String build() {
            return reports.build();
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
