/**
 * Test support: {@link dev.stagger.testing.VirtualClock} runs schedules instantly.
 */
@NullMarked
package dev.stagger.testing;

import org.jspecify.annotations.NullMarked;
