package dev.stagger.conformance;

/** A {@link ClientUnderTest} that reports under its name. */
public abstract class ClientKind implements ClientUnderTest {
    @Override
    public final String toString() {
        return name();
    }
}
