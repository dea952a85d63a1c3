/**
 * Implementation of stagger-idempotency; not API, may change without notice.
 */
@NullMarked
package dev.stagger.idempotency.internal;

import org.jspecify.annotations.NullMarked;
