package dev.stagger.spring.internal;

import dev.stagger.jdbc.SchemaMode;
import java.util.Locale;

/** The {@code schema-mode} properties of the stores; loaded only with stagger-jdbc present. */
public final class SchemaModes {
    private SchemaModes() {
    }

    /** {@code migrate} or {@code validate}, in any case, read as property {@code name}. */
    public static SchemaMode parse(String name, String value) {
        try {
            return SchemaMode.valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw PropertyCheck.invalid(name, value, "schema-mode must be migrate or validate");
        }
    }
}
