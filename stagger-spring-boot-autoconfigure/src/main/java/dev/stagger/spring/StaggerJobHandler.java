package dev.stagger.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a bean the handler of one job type of one queue, run by the worker pool the starter
 * builds for that queue ({@code stagger.jobs.enabled=true}; the pool's settings under
 * {@code stagger.jobs.pools.<queue>}).
 *
 * <p>On a method: a public method of a bean with one parameter, a {@code dev.stagger.jobs.JobContext};
 * returning normally completes the job, throwing fails the attempt (the policy decides: retry later,
 * or dead). On a type: the bean must implement {@code dev.stagger.jobs.JobHandler}. The method is
 * called through the bean's proxy, so {@code @Transactional} on it applies (each attempt its own
 * transaction). Delivery is at least once: see stagger-jobs.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface StaggerJobHandler {

    /** The queue whose jobs of {@link #type()} this handles. */
    String queue();

    /** The job type. */
    String type();

    /**
     * A retry under {@code stagger.retries} whose policy (attempts, backoff, jitter, deadline,
     * classification) this type's jobs follow. Empty: the pool's ({@code stagger.jobs.pools.<queue>.retry}).
     */
    String retry() default "";
}
