package dev.stagger.jdbc;

import java.util.List;

/**
 * A store's schema is not what this release needs, and the store was told not to change it
 * ({@link SchemaMode#VALIDATE}), or its tables exist without a recorded version, so that creating
 * them again would fail. The message names the component, the database and what is missing.
 */
public final class SchemaNotReadyException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String component;
    private final List<String> missingTables;
    private final int version;
    private final int requiredVersion;

    public SchemaNotReadyException(String message, String component, List<String> missingTables, int version,
                            int requiredVersion) {
        super(message);
        this.component = component;
        this.missingTables = List.copyOf(missingTables);
        this.version = version;
        this.requiredVersion = requiredVersion;
    }

    /** The component whose schema was checked, e.g. {@code idempotency:stagger_idempotency}. */
    public String component() {
        return component;
    }

    /** The tables that do not exist, schema-qualified where a schema was configured; may be empty. */
    public List<String> missingTables() {
        return missingTables;
    }

    /** The version recorded in the database, 0 when none. */
    public int version() {
        return version;
    }

    /** The version this release needs. */
    public int requiredVersion() {
        return requiredVersion;
    }
}
