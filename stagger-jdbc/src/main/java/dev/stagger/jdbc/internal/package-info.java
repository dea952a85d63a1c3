/**
 * Implementation of stagger-jdbc; not API, may change without notice.
 */
@NullMarked
package dev.stagger.jdbc.internal;

import org.jspecify.annotations.NullMarked;
