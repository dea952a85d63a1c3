-- stagger_jobs: schema version 3, POSTGRESQL
-- Generated from the definition the store applies at start-up (SchemaMigrations).
CREATE INDEX stagger_jobs_dead ON stagger_jobs (queue, finished_at) WHERE state = 'DEAD';
UPDATE stagger_schema_version SET version = 3 WHERE component = 'stagger_jobs';
