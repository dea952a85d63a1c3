package dev.stagger.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;

/**
 * Runs a bean method under the named Stagger retry of the {@link StaggerRegistry}: its policy
 * (attempts, backoff with jitter, deadline, classification), its circuit breaker and its budget.
 * On a type, applies to every public method.
 *
 * <h2>Return types</h2>
 * <ul>
 *   <li>Plain values: the method is invoked again for each attempt, on the caller's thread; waits
 *       block that thread (without holding a lock).
 *   <li>{@code CompletionStage} / {@code CompletableFuture}: the method is invoked again for each
 *       attempt; waits are scheduled, no thread blocks. Cancelling the returned future stops the
 *       retries. The policy's {@code attempt-timeout} bounds each attempt.
 *   <li>{@code Mono} / {@code Flux} (Reactor on the classpath): the method is invoked once and the
 *       publisher it returns is subscribed again for each attempt, when Stagger's schedule says,
 *       without blocking. A {@code Flux} passes on elements as they come, so a retried
 *       {@code Flux} repeats what the failed attempt had already emitted (as Reactor's own
 *       {@code retry} does); its demand is buffered.
 * </ul>
 * On giving up the last failure is rethrown unchanged (earlier ones suppressed); a refusal by the
 * breaker or the budget throws a {@code RetryRefusedException} subtype — unless a
 * {@link #fallbackMethod()} answers instead.
 *
 * <h2>Order with {@code @Transactional}</h2>
 * The advice runs outside Spring's transaction advice by default
 * ({@code stagger.annotation.order}), so on a method that is also {@code @Transactional} every
 * attempt is a transaction of its own: a deadlock rolls the attempt back and the next attempt
 * starts clean. Called from inside a transaction that is already running, the method joins that
 * transaction and a retry re-runs only the method, inside a transaction the database may already
 * have aborted: put the annotation on the outermost transactional method.
 *
 * <h2>Limits of proxies</h2>
 * Like {@code @Transactional}, the annotation works through a Spring proxy: a call from one method
 * of the bean to another ({@code this.charge()}) is not retried, nor are private or final
 * methods, nor objects the container did not create.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface StaggerRetry {

    /** The retry's name under {@code stagger.retries}; an unconfigured name gets the {@code default} entry. */
    @AliasFor("name")
    String value() default "";

    /** Same as {@link #value()}. */
    @AliasFor("value")
    String name() default "";

    /**
     * A method of the same bean that answers when the call fails for good: same parameters, plus
     * optionally a last parameter of a {@code Throwable} type that the failure must match (the
     * most specific match is used); same return type. Empty: no fallback.
     */
    String fallbackMethod() default "";

    /**
     * A hedging policy under {@code stagger.hedges} this method's calls follow, on top of its
     * retry's policy (replacing any hedge the retry names): while an attempt is slower than the
     * hedge's delay, the method is invoked again and the first good answer wins; the others are
     * cancelled (a blocking attempt's thread interrupted, a future cancelled). Hedges count
     * against the retry's {@code max-attempts} and spend its budget. Only for idempotent methods.
     * A blocking method's attempts run on the hedge's executor threads, not the caller's, so
     * thread-bound state (a transaction already running, the security context) is not theirs.
     * Empty: the retry's own hedge, if any.
     */
    String hedge() default "";

    /**
     * A bulkhead under {@code stagger.bulkheads} whose permit each attempt of this method holds
     * while it runs (replacing any bulkhead the retry names): at most its {@code max-concurrent}
     * calls of every method naming it run at once; a call finding it full waits up to its
     * {@code max-wait}, then fails with a {@code BulkheadFullException} (reason
     * {@code BULKHEAD_FULL}) unless a {@link #fallbackMethod()} answers. No permit is held while a
     * retry waits for its next attempt. Not with a hedge. Empty: the retry's own bulkhead, if any.
     */
    String bulkhead() default "";
}
