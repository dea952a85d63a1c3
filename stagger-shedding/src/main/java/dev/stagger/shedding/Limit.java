package dev.stagger.shedding;

import dev.stagger.internal.Checks;


/**
 * How a {@link LoadSheddingFilter} decides how many requests may run at once: an immutable
 * configuration of one algorithm. The filter builds the algorithm's running state from it, so one
 * {@code Limit} can configure any number of filters, each adapting on its own.
 *
 * <ul>
 *   <li>{@link GradientLimit}, the default: follows latency. It measures the latency the server
 *       has with almost nothing in flight (minRTT) and shrinks the limit as sampled latency rises
 *       above it; it needs no knowledge of the application.</li>
 *   <li>{@link AimdLimit}: additive increase, multiplicative decrease on a latency threshold you
 *       give it, as TCP does on packet loss. Simple and predictable when you know what "too slow"
 *       is.</li>
 *   <li>{@link #fixed(int)}: a constant limit, for a server whose capacity is known.</li>
 * </ul>
 *
 * <p>Only latency moves an adaptive limit. Status codes do not (a fast 500 says nothing about
 * capacity), and a request that ended with an exception is not sampled.
 */
public sealed interface Limit permits FixedLimit, AimdLimit, GradientLimit {

    /** A constant limit of {@code limit} requests in flight. */
    static Limit fixed(int limit) {
        return new FixedLimit(Checks.atLeast("limit", limit, 1));
    }
}
