/** Implementation of stagger-http; not API, may change without notice. */
@NullMarked
package dev.stagger.http.internal;

import org.jspecify.annotations.NullMarked;
