-- stagger_jobs: schema version 2, POSTGRESQL
-- Generated from the definition the store applies at start-up (SchemaMigrations).
ALTER TABLE stagger_jobs ADD COLUMN first_attempt_at BIGINT;
ALTER TABLE stagger_jobs ADD COLUMN backoff_state BIGINT NOT NULL DEFAULT 0;
UPDATE stagger_schema_version SET version = 2 WHERE component = 'stagger_jobs';
