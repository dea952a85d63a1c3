package dev.stagger;

/** An operation that wants to know which attempt it is on, or how much time it has left. */
@FunctionalInterface
public interface AttemptCallable<T> {
    T call(AttemptContext context) throws Exception;
}
