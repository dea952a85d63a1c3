/**
 * A seeded discrete-event simulation of retry strategies under contention and outages ({@link dev.stagger.sim.Simulation}).
 */
@NullMarked
package dev.stagger.sim;

import org.jspecify.annotations.NullMarked;
