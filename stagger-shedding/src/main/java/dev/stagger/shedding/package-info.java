/**
 * Server-side load shedding: {@link dev.stagger.shedding.LoadSheddingFilter} admits requests up to
 * an adaptive concurrency {@link dev.stagger.shedding.Limit} ({@link dev.stagger.shedding.GradientLimit},
 * {@link dev.stagger.shedding.AimdLimit}, or fixed) and answers the excess at once with 503 or 429
 * and a jittered {@code Retry-After} derived from the measured drain rate, optionally shedding
 * retries first ({@link dev.stagger.shedding.RetryMarker}). Events go to a
 * {@link dev.stagger.shedding.SheddingListener}.
 */
@NullMarked
package dev.stagger.shedding;

import org.jspecify.annotations.NullMarked;
