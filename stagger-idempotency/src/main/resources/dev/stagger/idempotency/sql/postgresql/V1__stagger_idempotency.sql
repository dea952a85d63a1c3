-- idempotency:stagger_idempotency: schema version 1, POSTGRESQL
-- Generated from the definition the store applies at start-up (SchemaMigrations).
CREATE TABLE IF NOT EXISTS stagger_schema_version (component VARCHAR(100) PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE stagger_idempotency (scope_id VARCHAR(64) PRIMARY KEY, fingerprint VARCHAR(64) NOT NULL, state VARCHAR(16) NOT NULL, lease_token VARCHAR(36), lease_until BIGINT NOT NULL, expires_at BIGINT NOT NULL, created_at BIGINT NOT NULL, status INTEGER, headers TEXT, body BYTEA);
CREATE INDEX stagger_idempotency_expires ON stagger_idempotency (expires_at);
INSERT INTO stagger_schema_version (component, version) VALUES ('idempotency:stagger_idempotency', 1);
