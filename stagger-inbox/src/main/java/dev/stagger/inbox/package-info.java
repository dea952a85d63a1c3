/**
 * The inbox: a processed-messages table, written in the consumer's own transaction, that makes
 * an at-least-once delivery (a broker's redelivery, a webhook's retry) take effect once. See
 * {@link dev.stagger.inbox.Inbox}.
 */
@NullMarked
package dev.stagger.inbox;

import org.jspecify.annotations.NullMarked;
