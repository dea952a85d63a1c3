-- stagger_jobs: schema version 4, POSTGRESQL
-- Generated from the definition the store applies at start-up (SchemaMigrations).
DROP INDEX stagger_jobs_lease;
CREATE INDEX stagger_jobs_lease ON stagger_jobs (queue, lease_until) WHERE lease_until IS NOT NULL;
UPDATE stagger_schema_version SET version = 4 WHERE component = 'stagger_jobs';
