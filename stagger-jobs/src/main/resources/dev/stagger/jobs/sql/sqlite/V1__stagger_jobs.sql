-- stagger_jobs: schema version 1, SQLITE
-- Generated from the definition the store applies at start-up (SchemaMigrations).
CREATE TABLE IF NOT EXISTS stagger_schema_version (component VARCHAR(100) PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE stagger_jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, queue VARCHAR(200) NOT NULL, type VARCHAR(200) NOT NULL, payload BLOB, job_key VARCHAR(300), state VARCHAR(16) NOT NULL, priority INTEGER NOT NULL, attempt INTEGER NOT NULL, max_attempts INTEGER NOT NULL, run_at BIGINT NOT NULL, created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT, lease_until BIGINT, locked_by VARCHAR(100));
CREATE UNIQUE INDEX stagger_jobs_key ON stagger_jobs (job_key);
CREATE INDEX stagger_jobs_due ON stagger_jobs (queue, priority DESC, run_at, id) WHERE state = 'AVAILABLE';
CREATE INDEX stagger_jobs_lease ON stagger_jobs (queue, lease_until) WHERE state = 'RUNNING';
CREATE INDEX stagger_jobs_purge ON stagger_jobs (queue, finished_at) WHERE state = 'SUCCEEDED';
CREATE TABLE stagger_job_errors (job_id BIGINT NOT NULL, attempt INTEGER NOT NULL, failed_at BIGINT NOT NULL, error_class VARCHAR(300) NOT NULL, message TEXT, stack_trace TEXT);
CREATE INDEX stagger_job_errors_job ON stagger_job_errors (job_id, attempt);
INSERT INTO stagger_schema_version (component, version) VALUES ('stagger_jobs', 1);
