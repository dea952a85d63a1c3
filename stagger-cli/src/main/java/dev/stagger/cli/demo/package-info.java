/**
 * The browser demo that {@code stagger demo} serves: labs for payments, breakers, jobs and the thundering herd.
 */
@NullMarked
package dev.stagger.cli.demo;

import org.jspecify.annotations.NullMarked;
