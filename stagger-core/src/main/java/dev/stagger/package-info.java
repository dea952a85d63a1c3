/**
 * Retrying safely: {@link dev.stagger.Retry} over a {@link dev.stagger.RetryPolicy} (attempts, {@link dev.stagger.Backoff}
 * with jitter, a {@link dev.stagger.Classifier}, deadlines), guarded by a {@link dev.stagger.RetryBudget} and a
 * {@link dev.stagger.CircuitBreaker}, observed through {@link dev.stagger.RetryListener}s.
 */
@NullMarked
package dev.stagger;

import org.jspecify.annotations.NullMarked;
