/**
 * Durable background jobs: {@link dev.stagger.jobs.JobQueue} enqueues, {@link dev.stagger.jobs.WorkerPool} runs them with
 * core's retry decisions, {@link dev.stagger.jobs.JobAdmin} inspects and redrives.
 */
@NullMarked
package dev.stagger.jobs;

import org.jspecify.annotations.NullMarked;
