/** Implementation of stagger-grpc; not API, may change without notice. */
@NullMarked
package dev.stagger.grpc.internal;

import org.jspecify.annotations.NullMarked;
