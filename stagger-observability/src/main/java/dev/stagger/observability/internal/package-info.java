/**
 * Implementation of stagger-observability; not API, may change without notice.
 */
@NullMarked
package dev.stagger.observability.internal;

import org.jspecify.annotations.NullMarked;
