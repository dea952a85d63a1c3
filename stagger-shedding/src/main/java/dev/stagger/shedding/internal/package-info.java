/**
 * Implementation of stagger-shedding; not API, may change without notice.
 */
@NullMarked
package dev.stagger.shedding.internal;

import org.jspecify.annotations.NullMarked;
