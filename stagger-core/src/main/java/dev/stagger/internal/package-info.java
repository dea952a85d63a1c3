/**
 * Implementation of stagger-core; not API, may change without notice.
 */
@NullMarked
package dev.stagger.internal;

import org.jspecify.annotations.NullMarked;
