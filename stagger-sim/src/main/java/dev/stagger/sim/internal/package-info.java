/**
 * Implementation of stagger-sim; not API, may change without notice.
 */
@NullMarked
package dev.stagger.sim.internal;

import org.jspecify.annotations.NullMarked;
