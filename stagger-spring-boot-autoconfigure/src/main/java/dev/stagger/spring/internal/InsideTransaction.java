package dev.stagger.spring.internal;

import java.lang.reflect.Method;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The rule for retries inside a running transaction, for {@code RetryingTransactionTemplate} and
 * the {@code @StaggerRetry} advice alike: only the outermost transaction can be retried. After a
 * deadlock or a serialization failure the database has aborted the whole transaction (PostgreSQL
 * answers every later statement with SQL state 25P02), so re-running a method that joined it only
 * fails again. {@link #running()} is the one test of "a transaction is already running"; what the
 * advice then does is {@code stagger.annotation.inside-transaction}: {@code fail} (the default:
 * refuse the call before running it), {@code once} (run it once without retries, saying why once
 * per method at WARN) or {@code retry} (retry it anyway: for methods that do not use the
 * transaction's database, such as an HTTP call made inside a transaction). A method whose own
 * {@code @Transactional} starts a new transaction ({@code REQUIRES_NEW}, {@code NOT_SUPPORTED},
 * {@code NEVER}) does not join the running one and is retried as usual.
 */
public final class InsideTransaction {
    /** The property choosing what the advice does. */
    public static final String PROPERTY = "stagger.annotation.inside-transaction";
    private static final Log LOG = LogFactory.getLog("dev.stagger.retry");
    private static final boolean TX = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager",
            InsideTransaction.class.getClassLoader());

    /** What the advice does with a call made inside a running transaction. */
    public enum Mode { FAIL, ONCE, RETRY }

    private final Mode mode;
    private final Map<Method, Boolean> joins = new ConcurrentHashMap<>();
    private final Map<Method, Boolean> warned = new ConcurrentHashMap<>();

    private InsideTransaction(Mode mode) {
        this.mode = mode;
    }

    /** The rule as {@value #PROPERTY} sets it (default {@code fail}); a bad value fails naming the property. */
    public static InsideTransaction from(Environment environment) {
        String value = environment.getProperty(PROPERTY, "fail");
        try {
            return new InsideTransaction(Mode.valueOf(value.trim().toUpperCase(Locale.ROOT)));
        } catch (IllegalArgumentException e) {
            throw PropertyCheck.invalid(PROPERTY, value, "inside-transaction must be fail, once or retry");
        }
    }

    /** The rule with {@code mode}. */
    public static InsideTransaction of(Mode mode) {
        return new InsideTransaction(mode);
    }

    /** True when a transaction is already running on this thread: a unit of work started now joins it. */
    public static boolean running() {
        return TX && org.springframework.transaction.support.TransactionSynchronizationManager.isActualTransactionActive();
    }

    /**
     * Whether the call of {@code method} (declared as {@code specific} on the target) under retry
     * {@code retry} must run once instead of being retried: false outside a transaction.
     *
     * @throws IllegalStateException in mode {@code fail}, when the call would join a running transaction
     */
    public boolean runOnce(Method specific, String retry) {
        if (mode == Mode.RETRY || !running() || !joins.computeIfAbsent(specific, InsideTransaction::joinsRunning)) {
            return false;
        }
        if (mode == Mode.FAIL) {
            throw new IllegalStateException("@StaggerRetry(\"" + retry + "\") on " + describe(specific)
                    + " was called inside a running transaction, so it was not run: a retry would re-run it in a "
                    + "transaction the database may already have aborted. Put @StaggerRetry on the method that starts "
                    + "the transaction (outside @Transactional), or set " + PROPERTY + "=once to run it once there "
                    + "(retry only if it does not use the transaction's database: " + PROPERTY + "=retry)");
        }
        if (warned.putIfAbsent(specific, Boolean.TRUE) == null) {
            LOG.warn("@StaggerRetry(\"" + retry + "\") on " + describe(specific) + " runs once, without retries, when "
                    + "called inside a running transaction (" + PROPERTY + "=once): only the outermost transaction "
                    + "can be retried. Said once per method.");
        }
        return true;
    }

    /** False when the method's own {@code @Transactional} suspends the running transaction. */
    private static boolean joinsRunning(Method specific) {
        if (!ClassUtils.isPresent("org.springframework.transaction.annotation.Transactional",
                InsideTransaction.class.getClassLoader())) {
            return true;
        }
        org.springframework.transaction.annotation.Transactional own = AnnotatedElementUtils.findMergedAnnotation(
                specific, org.springframework.transaction.annotation.Transactional.class);
        if (own == null) {
            own = AnnotatedElementUtils.findMergedAnnotation(specific.getDeclaringClass(),
                    org.springframework.transaction.annotation.Transactional.class);
        }
        if (own == null) {
            return true;
        }
        return switch (own.propagation()) {
            case REQUIRES_NEW, NOT_SUPPORTED, NEVER -> false;
            default -> true;
        };
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "()";
    }
}
