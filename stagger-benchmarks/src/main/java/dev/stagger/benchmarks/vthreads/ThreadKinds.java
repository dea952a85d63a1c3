package dev.stagger.benchmarks.vthreads;

import java.lang.reflect.InvocationTargetException;
import java.util.concurrent.ThreadFactory;

/**
 * Virtual threads reached by reflection, so this module still compiles with {@code --release 17}
 * while the harness uses them when it runs on JDK 21 or later.
 */
final class ThreadKinds {
    private ThreadKinds() {
    }

    static boolean virtualThreadsAvailable() {
        return Runtime.version().feature() >= 21;
    }

    /** {@code Thread.ofVirtual().name(prefix, 0).factory()}. */
    static ThreadFactory virtualThreadFactory(String prefix) {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Class<?> builderType = Class.forName("java.lang.Thread$Builder");
            builder = builderType.getMethod("name", String.class, long.class).invoke(builder, prefix, 0L);
            return (ThreadFactory) builderType.getMethod("factory").invoke(builder);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("virtual threads need JDK 21 or later; this is "
                    + Runtime.version(), e instanceof InvocationTargetException ? e.getCause() : e);
        }
    }

    /** Whether {@code t} is a virtual scheduler's carrier ({@code jdk.internal.misc.CarrierThread}). */
    static boolean isCarrier(Thread t) {
        return t.getClass().getName().equals("jdk.internal.misc.CarrierThread");
    }
}
