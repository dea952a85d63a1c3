/** Feign's client decorated with the HTTP rules; not API. */
@NullMarked
package dev.stagger.feign.internal;

import org.jspecify.annotations.NullMarked;
