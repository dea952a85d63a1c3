/**
 * Apache HttpClient 5 calls retried by {@link dev.stagger.http.RetryingHttpClient}'s rules: classic
 * ({@link dev.stagger.httpclient5.RetryingExecChainHandler}) and async
 * ({@link dev.stagger.httpclient5.RetryingAsyncClient}).
 */
@NullMarked
package dev.stagger.httpclient5;

import org.jspecify.annotations.NullMarked;
