/**
 * Implementation of stagger-spring-boot-autoconfigure; not API, may change without notice.
 */
@NullMarked
package dev.stagger.spring.internal;

import org.jspecify.annotations.NullMarked;
