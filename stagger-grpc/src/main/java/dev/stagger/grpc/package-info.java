/**
 * Retrying grpc-java calls safely: {@link dev.stagger.grpc.RetryingClientInterceptor} retries the
 * statuses of a {@link dev.stagger.grpc.GrpcStatusTable} by whether the method is safe to call
 * again, honours {@code grpc-retry-pushback-ms}, and sends each attempt with the remaining deadline
 * and its attempt number. Whether and when to retry is decided by {@link dev.stagger.Retry}.
 */
@NullMarked
package dev.stagger.grpc;

import org.jspecify.annotations.NullMarked;
