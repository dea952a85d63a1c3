package dev.stagger;

/** {@link NestedRetryTest} with every call keeping a frame, as once a deadline, a refusal or a scope was used. */
class NestedRetryFramedTest extends NestedRetryTest {
    @Override
    boolean framed() {
        return true;
    }
}
