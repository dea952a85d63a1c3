package dev.stagger.spring;

import dev.stagger.Retry;
import dev.stagger.jdbc.Transactions;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/** A {@link RetryingTransactionTemplate} on the application's transaction manager. */
@AutoConfiguration(after = StaggerAutoConfiguration.class,
        afterName = {"org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
                "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
                "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration"})
@ConditionalOnClass({Transactions.class, PlatformTransactionManager.class, DataSourceUtils.class})
@ConditionalOnBean(PlatformTransactionManager.class)
public class StaggerTransactionAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public RetryingTransactionTemplate retryingTransactionTemplate(StaggerRegistry registry, StaggerProperties properties,
                                                                   PlatformTransactionManager transactionManager,
                                                                   ObjectProvider<DataSource> dataSource) {
        String name = properties.getTransactions().getRetry();
        Retry retry = name != null ? registry.retry(name)
                : registry.customize(Retry.of("transaction", Transactions.defaultPolicy()).withClock(registry.factory().clock()));
        return new RetryingTransactionTemplate(retry, transactionManager, new DefaultTransactionDefinition(),
                dataSource.getIfUnique());
    }
}
