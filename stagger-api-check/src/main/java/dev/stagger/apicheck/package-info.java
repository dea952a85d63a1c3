/**
 * Reads the public surface of Stagger's modules from their class files, for the API check (build only).
 */
@NullMarked
package dev.stagger.apicheck;

import org.jspecify.annotations.NullMarked;
