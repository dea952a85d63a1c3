package dev.stagger.spring.internal;

import dev.stagger.idempotency.servlet.KeyPolicy;
import dev.stagger.idempotency.servlet.KeyRequirement;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The idempotency filter's safe defaults and start-up warnings. Paths under
 * {@code stagger.idempotency.exclude-paths} are left alone; unset, that is the actuator's base path
 * ({@code management.endpoints.web.base-path}, {@code /actuator}), whose POSTs
 * ({@code /actuator/stagger/{breaker}}) carry no key. A WARN at startup names the property to set
 * when {@code stagger.idempotency.paths} is not set (the filter then covers every path), and when
 * neither {@code stagger.idempotency.scope-header} nor a Spring Security filter chain gives
 * requests a client identity (every keyed request is then refused with
 * {@code 400 no-client-scope}).
 */
public final class IdempotencyDefaults {
    private static final String AT = "stagger.idempotency.";
    private static final Log LOG = LogFactory.getLog("dev.stagger.idempotency");
    private static final String SECURITY_CHAIN = "org.springframework.security.web.SecurityFilterChain";

    private IdempotencyDefaults() {
    }

    /**
     * The path prefixes the filter leaves alone: {@code excludePaths} as set, or else the actuator's
     * base path. Each is a path within the application, matched with everything under it.
     */
    public static List<String> excluded(@Nullable List<String> excludePaths, Environment environment) {
        List<String> prefixes = new ArrayList<>();
        if (excludePaths == null) {
            String actuator = environment.getProperty("management.endpoints.web.base-path", "/actuator").trim();
            if (actuator.length() > 1) { // "/" or "": the actuator shares the application's paths
                prefixes.add(actuator.startsWith("/") ? actuator : "/" + actuator);
            }
            return prefixes;
        }
        for (String path : excludePaths) {
            String p = path == null ? "" : path.trim();
            if (!p.startsWith("/") || p.equals("/")) {
                throw PropertyCheck.invalid(AT + "exclude-paths", path,
                        "exclude-paths must be paths within the application starting with / (and not / itself)");
            }
            p = p.replaceFirst("/\\*{1,2}$", "");
            prefixes.add(p.endsWith("/") ? p.substring(0, p.length() - 1) : p);
        }
        return prefixes;
    }

    /** {@code requirement}, with every route under one of {@code prefixes} ignored. */
    public static KeyRequirement excluding(KeyRequirement requirement, List<String> prefixes) {
        if (prefixes.isEmpty()) {
            return requirement;
        }
        List<String> under = List.copyOf(prefixes);
        return (method, route) -> {
            for (String prefix : under) {
                if (route.equals(prefix) || route.startsWith(prefix + "/")) {
                    return KeyPolicy.IGNORED;
                }
            }
            return requirement.policy(method, route);
        };
    }

    /** Logs a WARN for each setting a service most likely did not mean. */
    public static void warn(Environment environment, ListableBeanFactory beans, List<String> excluded) {
        boolean pathsSet = Binder.get(environment).bind(AT + "paths", Bindable.listOf(String.class)).isBound();
        if (!pathsSet) {
            LOG.warn("stagger.idempotency.paths is not set: the idempotency filter covers every path (/*)"
                    + (excluded.isEmpty() ? "" : " except " + String.join(", ", excluded) + " (stagger.idempotency.exclude-paths)")
                    + ", so every POST and PATCH there without an Idempotency-Key is refused with 400 key-missing. "
                    + "Set stagger.idempotency.paths to the routes that take keys.");
        }
        if (environment.getProperty(AT + "scope-header") == null && !hasSecurityChain(beans)) {
            LOG.warn("stagger.idempotency.scope-header is not set and no Spring Security filter chain names the "
                    + "client: every request with an Idempotency-Key will be refused with 400 no-client-scope. "
                    + "Set stagger.idempotency.scope-header to the header carrying each client's API key, or add "
                    + "Spring Security.");
        }
    }

    private static boolean hasSecurityChain(ListableBeanFactory beans) {
        ClassLoader loader = IdempotencyDefaults.class.getClassLoader();
        if (!ClassUtils.isPresent(SECURITY_CHAIN, loader)) {
            return false;
        }
        return beans.getBeanNamesForType(ClassUtils.resolveClassName(SECURITY_CHAIN, loader), true, false).length > 0;
    }
}
