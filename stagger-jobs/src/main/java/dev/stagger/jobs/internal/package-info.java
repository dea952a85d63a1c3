/**
 * Implementation of stagger-jobs; not API, may change without notice.
 */
@NullMarked
package dev.stagger.jobs.internal;

import org.jspecify.annotations.NullMarked;
