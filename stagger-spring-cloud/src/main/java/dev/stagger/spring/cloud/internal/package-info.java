/**
 * Implementation of stagger-spring-cloud; not API, may change without notice.
 */
@NullMarked
package dev.stagger.spring.cloud.internal;

import org.jspecify.annotations.NullMarked;
