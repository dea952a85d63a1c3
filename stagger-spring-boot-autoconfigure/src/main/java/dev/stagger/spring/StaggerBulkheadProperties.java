package dev.stagger.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The named bulkheads under {@code stagger.bulkheads.*}: limits on calls in flight to one
 * downstream, each shared by every retry naming it ({@code stagger.retries.<name>.bulkhead}, or
 * {@code @StaggerRetry(bulkhead = "...")}); a retry uses the bulkhead of its own name when one is
 * configured. The entry named {@code default} supplies unset values of the others.
 *
 * <pre>
 * stagger:
 *   bulkheads:
 *     inventory:
 *       max-concurrent: 20
 *       max-wait: 50ms
 *     search:
 *       max-concurrent: 50
 *       min-concurrent: 5
 *       latency-threshold: 300ms   # adaptive: lowered while the downstream is slow or failing
 * </pre>
 */
@ConfigurationProperties("stagger")
public class StaggerBulkheadProperties {
    /** Named bulkheads; every retry naming one shares the same permits. */
    private Map<String, BulkheadProperties> bulkheads = new LinkedHashMap<>();

    public Map<String, BulkheadProperties> getBulkheads() { return bulkheads; }
    public void setBulkheads(Map<String, BulkheadProperties> bulkheads) { this.bulkheads = bulkheads; }

    /** One bulkhead ({@code dev.stagger.Bulkhead}). Unset values come from {@code default}, then from Stagger's defaults. */
    public static class BulkheadProperties {
        /** Calls in flight at most; the ceiling of an adaptive limit (default 25). */
        private @Nullable Integer maxConcurrent;
        /** The floor of an adaptive limit (default 1). */
        private @Nullable Integer minConcurrent;
        /** How long a call may wait for a permit when the bulkhead is full (default 0: refused at once). */
        private @Nullable Duration maxWait;
        /**
         * Makes the limit adaptive: attempts slower than this, or failing in a way the retry would
         * retry, lower it; fast ones raise it back (unset: a fixed limit).
         */
        private @Nullable Duration latencyThreshold;

        public @Nullable Integer getMaxConcurrent() { return maxConcurrent; }
        public void setMaxConcurrent(@Nullable Integer maxConcurrent) { this.maxConcurrent = maxConcurrent; }
        public @Nullable Integer getMinConcurrent() { return minConcurrent; }
        public void setMinConcurrent(@Nullable Integer minConcurrent) { this.minConcurrent = minConcurrent; }
        public @Nullable Duration getMaxWait() { return maxWait; }
        public void setMaxWait(@Nullable Duration maxWait) { this.maxWait = maxWait; }
        public @Nullable Duration getLatencyThreshold() { return latencyThreshold; }
        public void setLatencyThreshold(@Nullable Duration latencyThreshold) { this.latencyThreshold = latencyThreshold; }
    }
}
