/**
 * The {@code stagger} command line: send, run, simulate, inspect jobs and queues, and the demo.
 */
@NullMarked
package dev.stagger.cli;

import org.jspecify.annotations.NullMarked;
