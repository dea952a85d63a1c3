/**
 * OkHttp calls retried by {@link dev.stagger.http.RetryingHttpClient}'s rules
 * ({@link dev.stagger.okhttp.RetryingInterceptor}).
 */
@NullMarked
package dev.stagger.okhttp;

import org.jspecify.annotations.NullMarked;
