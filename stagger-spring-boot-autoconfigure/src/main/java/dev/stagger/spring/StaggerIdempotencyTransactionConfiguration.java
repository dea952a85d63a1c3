package dev.stagger.spring;

import dev.stagger.idempotency.IdempotencyStore;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.servlet.RequestTransactions;
import dev.stagger.spring.internal.PropertyCheck;
import dev.stagger.spring.internal.SpringRequestTransactions;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * {@code stagger.idempotency.transactional=true}: the idempotency filter runs each keyed request
 * in a transaction of the application's {@link PlatformTransactionManager} on the store's
 * {@code DataSource}, and stores the response in it, so the handler's {@code @Transactional}
 * code, {@code JdbcTemplate} and JPA writes commit together with the stored response or not at
 * all. Imported by {@link StaggerIdempotencyAutoConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({PlatformTransactionManager.class, DataSourceUtils.class})
@ConditionalOnProperty(prefix = "stagger.idempotency", name = "transactional", havingValue = "true")
class StaggerIdempotencyTransactionConfiguration {
    static final String PROPERTY = "stagger.idempotency.transactional";

    @Bean
    RequestTransactions staggerIdempotencyTransactions(IdempotencyStore store, ObjectProvider<DataSource> dataSource,
                                                       ObjectProvider<PlatformTransactionManager> transactionManager) {
        if (!(store instanceof JdbcIdempotencyStore jdbc) || !jdbc.completesInTransactions()) {
            throw PropertyCheck.invalid(PROPERTY, "true",
                    "transactional needs stagger.idempotency.store=jdbc on a PostgreSQL DataSource, got " + store);
        }
        DataSource ds = dataSource.getIfUnique();
        if (ds == null) {
            throw PropertyCheck.invalid(PROPERTY, "true", "transactional needs one DataSource bean (the store's)");
        }
        PlatformTransactionManager tm = transactionManager.getIfUnique();
        if (tm == null) {
            throw PropertyCheck.invalid(PROPERTY, "true", "transactional needs one PlatformTransactionManager bean");
        }
        if (tm instanceof DataSourceTransactionManager dstm && dstm.getDataSource() != ds) {
            throw PropertyCheck.invalid(PROPERTY, "true", "transactional needs the transaction manager on the store's"
                    + " DataSource; " + tm.getClass().getSimpleName() + " manages another");
        }
        return new SpringRequestTransactions(tm, ds);
    }
}
