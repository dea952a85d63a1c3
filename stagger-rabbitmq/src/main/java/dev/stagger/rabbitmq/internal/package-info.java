/**
 * Implementation of stagger-rabbitmq; not API, may change without notice.
 */
@NullMarked
package dev.stagger.rabbitmq.internal;

import org.jspecify.annotations.NullMarked;
