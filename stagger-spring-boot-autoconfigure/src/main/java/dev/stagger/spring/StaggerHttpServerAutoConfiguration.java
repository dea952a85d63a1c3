package dev.stagger.spring;

import dev.stagger.Clock;
import dev.stagger.http.servlet.DeadlineFilter;
import dev.stagger.spring.internal.PropertyCheck;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The server side of Stagger's HTTP headers in a servlet application, on by default whenever
 * stagger-http is present: {@link DeadlineFilter} on every path, for the request, async and error
 * dispatches. The caller's {@code Stagger-Deadline-Ms} (capped to
 * {@code stagger.http.server.deadline.max}) bounds every Stagger retry the request runs, and an
 * error answer that a retry decided carries {@code Stagger-No-Retry}.
 * {@code stagger.http.server.deadline.enabled=false} leaves it out. With Micrometer, the headers
 * ignored, capped and expired are counted as {@value #METER}{@code {outcome}}.
 */
@AutoConfiguration(after = StaggerAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({DeadlineFilter.class, FilterRegistrationBean.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnProperty(prefix = "stagger.http.server.deadline", name = "enabled", havingValue = "true", matchIfMissing = true)
public class StaggerHttpServerAutoConfiguration {
    /** The meter counting deadline headers the filter did not take as sent; tag {@code outcome}: rejected, capped, expired. */
    public static final String METER = "stagger.http.deadline.headers";
    private static final String AT = "stagger.http.server.deadline.";

    @Bean
    public FilterRegistrationBean<DeadlineFilter> staggerDeadlineFilter(StaggerProperties properties,
                                                                        ObjectProvider<Clock> clock) {
        StaggerProperties.DeadlineFilterProperties p = properties.getHttp().getServer().getDeadline();
        // the retries' clock: a scope bounds the retries on its own clock only
        DeadlineFilter.Builder b = DeadlineFilter.builder().clock(clock.getIfUnique(Clock::system));
        PropertyCheck.apply(AT + "max", p.getMax(), b::maxDeadline);
        List<String> addresses = p.getTrustedAddresses();
        if (addresses != null) {
            Set<String> trusted = Set.copyOf(addresses.stream().map(String::trim).toList());
            b.deadlinesTrusted(request -> trusted.contains(request.getRemoteAddr()));
        }
        FilterRegistrationBean<DeadlineFilter> registration = new FilterRegistrationBean<>(b.build());
        registration.setName("staggerDeadlineFilter");
        registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC, DispatcherType.ERROR);
        registration.setAsyncSupported(true);
        registration.setOrder(p.getOrder());
        return registration;
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Meters {
        /** Counts, on the application's registry (when it has one), what the filter ignored, capped or refused. */
        @Bean
        SmartInitializingSingleton staggerDeadlineMeters(ObjectProvider<MeterRegistry> registry,
                                                         FilterRegistrationBean<DeadlineFilter> filter) {
            return () -> registry.ifAvailable(r -> {
                DeadlineFilter f = Objects.requireNonNull(filter.getFilter(), "the deadline filter"); // made with it
                counter(r, f, "rejected", DeadlineFilter::rejectedDeadlines, "Deadline headers ignored: not decimal milliseconds");
                counter(r, f, "capped", DeadlineFilter::cappedDeadlines, "Deadline headers capped to the maximum");
                counter(r, f, "expired", DeadlineFilter::expiredDeadlines, "Requests that arrived with no time left, answered 504");
            });
        }

        private static void counter(MeterRegistry registry, DeadlineFilter filter, String outcome,
                                    ToDoubleFunction<DeadlineFilter> count, String description) {
            FunctionCounter.builder(METER, filter, count).tag("outcome", outcome).description(description).register(registry);
        }
    }
}
