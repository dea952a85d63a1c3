package dev.stagger.spring;

import dev.stagger.idempotency.IdempotencyStore;
import dev.stagger.idempotency.InMemoryIdempotencyStore;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.servlet.IdempotencyFilter;
import dev.stagger.idempotency.servlet.KeyPolicy;
import dev.stagger.idempotency.servlet.KeyRequirement;
import dev.stagger.idempotency.servlet.RequestTransactions;
import dev.stagger.idempotency.servlet.ScopeResolver;
import dev.stagger.spring.internal.IdempotencyDefaults;
import dev.stagger.spring.internal.PropertyCheck;
import dev.stagger.spring.internal.SchemaModes;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * The server side of {@code Idempotency-Key} for the paths of {@code stagger.idempotency.paths},
 * only when {@code stagger.idempotency.enabled=true}. The store is the application's
 * {@code DataSource} (PostgreSQL or SQLite; tables created on startup unless
 * {@code schema-mode=validate}) or memory. The filter runs after Spring Security's filter chain,
 * so a logged-in principal scopes the keys; without Spring Security, set
 * {@code stagger.idempotency.scope-header} to the header carrying each client's API key (only its
 * SHA-256 is kept), or every keyed request is refused with {@code 400 no-client-scope} — keys
 * without a client identity would let one client read another's stored responses. Paths under
 * {@code stagger.idempotency.exclude-paths} (by default the actuator's base path) are left alone;
 * a WARN at startup names the property to set when {@code paths} or the client identity is missing
 * ({@link IdempotencyDefaults}).
 */
@AutoConfiguration(after = StaggerAutoConfiguration.class,
        afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass({IdempotencyFilter.class, FilterRegistrationBean.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnProperty(prefix = "stagger.idempotency", name = "enabled", havingValue = "true")
@Import(StaggerIdempotencyTransactionConfiguration.class)
public class StaggerIdempotencyAutoConfiguration {
    private static final String AT = "stagger.idempotency.";

    @Bean
    @ConditionalOnMissingBean
    public IdempotencyStore staggerIdempotencyStore(StaggerProperties properties, ObjectProvider<DataSource> dataSource) {
        StaggerProperties.Idempotency p = properties.getIdempotency();
        switch (p.getStore().toLowerCase(Locale.ROOT)) {
            case "memory":
                return new InMemoryIdempotencyStore();
            case "jdbc":
                DataSource ds = dataSource.getIfUnique();
                if (ds == null) {
                    throw PropertyCheck.invalid(AT + "store", p.getStore(), "store jdbc needs one DataSource bean");
                }
                JdbcIdempotencyStore.Builder b = JdbcIdempotencyStore.builder(ds);
                PropertyCheck.apply(AT + "table-prefix", p.getTablePrefix(), b::tablePrefix);
                if (p.getSchemaMode() != null) {
                    b.schemaMode(SchemaModes.parse(AT + "schema-mode", p.getSchemaMode()));
                }
                return b.build();
            default:
                throw PropertyCheck.invalid(AT + "store", p.getStore(), "store must be jdbc or memory");
        }
    }

    @Bean
    public FilterRegistrationBean<IdempotencyFilter> staggerIdempotencyFilter(IdempotencyStore store,
                                                                              StaggerProperties properties,
                                                                              Environment environment,
                                                                              ObjectProvider<RequestTransactions> transactions) {
        StaggerProperties.Idempotency p = properties.getIdempotency();
        IdempotencyFilter.Builder b = IdempotencyFilter.builder(store);
        PropertyCheck.apply(AT + "lease", p.getLease(), b::lease);
        PropertyCheck.apply(AT + "expiry", p.getExpiry(), b::expiry);
        KeyRequirement requirement = KeyRequirement.defaults();
        if (p.getKeyRequirement() != null) {
            switch (p.getKeyRequirement().toLowerCase(Locale.ROOT)) {
                case "required" -> requirement = KeyRequirement.defaults();
                case "optional" -> requirement = (method, route) -> {
                    KeyPolicy policy = KeyRequirement.defaults().policy(method, route);
                    return policy == KeyPolicy.REQUIRED ? KeyPolicy.OPTIONAL : policy;
                };
                default -> throw PropertyCheck.invalid(AT + "key-requirement", p.getKeyRequirement(),
                        "key-requirement must be required or optional");
            }
        }
        // the actuator's base path unless exclude-paths says otherwise
        b.keyRequirement(IdempotencyDefaults.excluding(requirement,
                IdempotencyDefaults.excluded(p.getExcludePaths(), environment)));
        if (p.getScopeHeader() != null) {
            b.scopeResolver(hashedHeader(p.getScopeHeader()));
        }
        if (p.isTransactional()) {
            b.transactional(transactions.getIfAvailable(() -> {
                throw PropertyCheck.invalid(AT + "transactional", true, "transactional needs spring-jdbc on the class path");
            }));
        }
        IdempotencyFilter filter;
        try {
            filter = b.build();
        } catch (IllegalArgumentException e) {
            // the one check of settings together, expiry against lease: blame the one that was set
            boolean expirySet = p.getExpiry() != null;
            throw PropertyCheck.invalid(AT + (expirySet ? "expiry" : "lease"), expirySet ? p.getExpiry() : p.getLease(),
                    e.getMessage());
        }
        FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setName("staggerIdempotencyFilter");
        registration.setUrlPatterns(p.getPaths());
        registration.setOrder(p.getOrder());
        return registration;
    }

    /** WARNs at startup naming the property to set when no paths or no client identity are configured. */
    @Bean
    static SmartInitializingSingleton staggerIdempotencyStartupWarnings(Environment environment, ListableBeanFactory beans,
                                                                        StaggerProperties properties) {
        return () -> IdempotencyDefaults.warn(environment, beans,
                IdempotencyDefaults.excluded(properties.getIdempotency().getExcludePaths(), environment));
    }

    /** The client named by a header carrying its secret API key: {@code header:<name>:<sha-256 of the value>}. */
    static ScopeResolver hashedHeader(String header) {
        if (header.isBlank()) {
            throw PropertyCheck.invalid(AT + "scope-header", header, "scope-header must not be blank");
        }
        return request -> {
            String value = request.getHeader(header);
            if (value == null || value.isBlank()) {
                return Optional.empty();
            }
            try {
                byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.trim().getBytes(StandardCharsets.UTF_8));
                return Optional.of("header:" + header.toLowerCase(Locale.ROOT) + ":" + HexFormat.of().formatHex(digest));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is required of every JVM", e);
            }
        };
    }
}
