/**
 * Retrying {@link java.net.http.HttpClient} calls safely: {@link dev.stagger.http.RetryingHttpClient}
 * retries the statuses of a {@link dev.stagger.http.StatusTable} and network failures by whether
 * the request may already have been processed, honours {@code Retry-After}, and gives POST and
 * PATCH an {@code Idempotency-Key} (see {@link dev.stagger.http.IdempotencyKeyMode}). Retries are
 * reported as {@link dev.stagger.http.HttpRetryEvent}s to {@link dev.stagger.http.HttpRetryListener}s.
 */
@NullMarked
package dev.stagger.http;

import org.jspecify.annotations.NullMarked;
