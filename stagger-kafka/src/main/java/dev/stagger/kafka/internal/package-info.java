/** The consumer's poll loop, partition lanes, header codec and topic set; not API. */
@NullMarked
package dev.stagger.kafka.internal;

import org.jspecify.annotations.NullMarked;
