package dev.stagger.spring.internal;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Turns a Stagger builder's {@link IllegalArgumentException} into Boot's invalid-property
 * failure, naming the property and its value, so startup stops with a line a user can act on.
 */
public final class PropertyCheck {
    private PropertyCheck() {
    }

    /** A setter that may refuse its value. */
    @FunctionalInterface
    public interface Setter<V> {
        void set(V value);
    }

    /** Applies {@code value} (when set) through {@code setter}, reporting a refusal as property {@code name}. */
    public static <V> void apply(String name, @Nullable V value, Setter<V> setter) {
        if (value == null) {
            return;
        }
        try {
            setter.set(value);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw invalid(name, value, e.getMessage());
        }
    }

    public static InvalidConfigurationPropertyValueException invalid(String name, @Nullable Object value,
                                                                     @Nullable String reason) {
        return new InvalidConfigurationPropertyValueException(name, echo(value), reason);
    }

    /** A value as shown in a message: at most 64 characters, with the length when cut. */
    public static String echo(@Nullable Object value) {
        String s = String.valueOf(value);
        return s.length() <= 64 ? s : s.substring(0, 64) + "... (" + s.length() + " chars)";
    }
}
