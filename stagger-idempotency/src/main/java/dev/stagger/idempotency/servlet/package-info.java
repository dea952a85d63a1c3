/**
 * The servlet filter that runs a keyed request once and replays its response.
 */
@NullMarked
package dev.stagger.idempotency.servlet;

import org.jspecify.annotations.NullMarked;
