/**
 * Stagger's core: retries, backoff with jitter, classification, deadlines, retry budgets and
 * circuit breakers, with no dependency beyond the JDK.
 */
@SuppressWarnings("module") // qualified exports name Stagger modules that are compiled later
module dev.stagger.core {
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger;
    exports dev.stagger.testing;

    exports dev.stagger.internal to dev.stagger.jobs;
}
