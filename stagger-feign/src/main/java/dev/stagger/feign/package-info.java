/**
 * OpenFeign calls retried by {@link dev.stagger.http.RetryingHttpClient}'s rules
 * ({@link dev.stagger.feign.RetryingCapability}).
 */
@NullMarked
package dev.stagger.feign;

import org.jspecify.annotations.NullMarked;
