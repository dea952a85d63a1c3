/**
 * Retried JDBC transactions ({@link dev.stagger.jdbc.Transactions}), SQL failure classification
 * ({@link dev.stagger.jdbc.SqlClassifier}) and what Stagger's stores share: schema versions, dialects, {@link dev.stagger.jdbc.StoreException}.
 */
@NullMarked
package dev.stagger.jdbc;

import org.jspecify.annotations.NullMarked;
