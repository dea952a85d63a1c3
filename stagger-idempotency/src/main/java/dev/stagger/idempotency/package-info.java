/**
 * Idempotency keys on the server: scopes, request fingerprints, stored responses and the stores that hold them.
 */
@NullMarked
package dev.stagger.idempotency;

import org.jspecify.annotations.NullMarked;
