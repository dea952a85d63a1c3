package dev.stagger.spring;

import dev.stagger.Nesting;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Everything under {@code stagger.*}. Each map holds named instances; the entry named
 * {@code default} is not an instance but the values every other entry of its map inherits (an
 * entry's own value wins). Values are checked when the context starts: a bad one fails startup
 * with the property's full name and the value.
 *
 * <pre>
 * stagger:
 *   retries:
 *     default: { max-attempts: 4, backoff: { base: 100ms } }
 *     payments: { deadline: 10s, circuit-breaker: payments, budget: shared }
 *   circuit-breakers:
 *     payments: { failure-rate-threshold: 0.5, open-duration: 30s }
 *   budgets:
 *     shared: { ratio: 0.1 }
 *   throttles:
 *     payments: { k: 2, window: 2m }
 *   hedges:
 *     catalog: { delay: 50ms, percentile: 95 }
 * </pre>
 */
@ConfigurationProperties("stagger")
public class StaggerProperties {
    /** The name of the map entry every other entry inherits from. */
    public static final String DEFAULT = "default";
    /** The value of {@code stagger.retries.<name>.budget} that opts out of the default budget. */
    public static final String NO_BUDGET = "none";
    /** The value of {@code stagger.retries.<name>.hedge} that turns off the hedge of the same name. */
    public static final String NO_HEDGE = "none";

    /** Named retries ({@code Retry}): policy plus the breaker and budget that guard it. */
    private Map<String, RetryProperties> retries = new LinkedHashMap<>();
    /** Named circuit breakers; a retry or HTTP client refers to one by name. */
    private Map<String, CircuitBreakerProperties> circuitBreakers = new LinkedHashMap<>();
    /** Named retry budgets; every retry naming one shares the same budget. */
    private Map<String, BudgetProperties> budgets = new LinkedHashMap<>();
    /** Named adaptive throttles; every retry naming one shares the same throttle. */
    private Map<String, ThrottleProperties> throttles = new LinkedHashMap<>();
    /** Named hedging policies; a retry or an annotated method refers to one by name. */
    private Map<String, HedgeProperties> hedges = new LinkedHashMap<>();
    /** Method annotation ({@code @StaggerRetry}) settings. */
    private Annotation annotation = new Annotation();
    /** Retrying HTTP clients for Spring's RestClient, RestTemplate and WebClient. */
    private Http http = new Http();
    /** Retrying transactions with Spring's transaction manager. */
    private Transactions transactions = new Transactions();
    /** The server-side {@code Idempotency-Key} filter. */
    private Idempotency idempotency = new Idempotency();
    /** Durable job queue and worker pools. */
    private Jobs jobs = new Jobs();
    /** Structured retry log lines through the application's logging. */
    private Logging logging = new Logging();
    /** Micrometer meters. */
    private Metrics metrics = new Metrics();
    /** Micrometer observations (traces) of every retry call and attempt. */
    private Observation observation = new Observation();
    /** The caller's context (trace, MDC) on the threads a hedge or an async attempt runs on. */
    private ContextPropagation contextPropagation = new ContextPropagation();
    /** Breaker health contributor. */
    private Health health = new Health();
    /** Spring Framework 7's own retry API ({@code RetryTemplate}, {@code @Retryable}) run by Stagger. */
    private SpringRetry springRetry = new SpringRetry();

    public Map<String, RetryProperties> getRetries() { return retries; }
    public void setRetries(Map<String, RetryProperties> retries) { this.retries = retries; }
    public Map<String, CircuitBreakerProperties> getCircuitBreakers() { return circuitBreakers; }
    public void setCircuitBreakers(Map<String, CircuitBreakerProperties> circuitBreakers) { this.circuitBreakers = circuitBreakers; }
    public Map<String, BudgetProperties> getBudgets() { return budgets; }
    public void setBudgets(Map<String, BudgetProperties> budgets) { this.budgets = budgets; }
    public Map<String, ThrottleProperties> getThrottles() { return throttles; }
    public void setThrottles(Map<String, ThrottleProperties> throttles) { this.throttles = throttles; }
    public Map<String, HedgeProperties> getHedges() { return hedges; }
    public void setHedges(Map<String, HedgeProperties> hedges) { this.hedges = hedges; }
    public Annotation getAnnotation() { return annotation; }
    public void setAnnotation(Annotation annotation) { this.annotation = annotation; }
    public Http getHttp() { return http; }
    public void setHttp(Http http) { this.http = http; }
    public Transactions getTransactions() { return transactions; }
    public void setTransactions(Transactions transactions) { this.transactions = transactions; }
    public Idempotency getIdempotency() { return idempotency; }
    public void setIdempotency(Idempotency idempotency) { this.idempotency = idempotency; }
    public Jobs getJobs() { return jobs; }
    public void setJobs(Jobs jobs) { this.jobs = jobs; }
    public Logging getLogging() { return logging; }
    public void setLogging(Logging logging) { this.logging = logging; }
    public Metrics getMetrics() { return metrics; }
    public void setMetrics(Metrics metrics) { this.metrics = metrics; }
    public Observation getObservation() { return observation; }
    public void setObservation(Observation observation) { this.observation = observation; }
    public ContextPropagation getContextPropagation() { return contextPropagation; }
    public void setContextPropagation(ContextPropagation contextPropagation) { this.contextPropagation = contextPropagation; }
    public Health getHealth() { return health; }
    public void setHealth(Health health) { this.health = health; }
    public SpringRetry getSpringRetry() { return springRetry; }
    public void setSpringRetry(SpringRetry springRetry) { this.springRetry = springRetry; }

    /** A retry policy and its guards. Unset values come from {@code default}, then from Stagger's defaults. */
    public static class RetryProperties {
        /** Starting point: {@code interactive} (5 attempts, 15 s deadline) or {@code background} (8 attempts, 10 min). */
        private @Nullable String preset;
        /** Attempts in all, the first included (1 = no retry). */
        private @Nullable Integer maxAttempts;
        /** The wait before each retry. */
        private BackoffProperties backoff = new BackoffProperties();
        /** One limit for all attempts and waits together. */
        private @Nullable Duration deadline;
        /** Limit for one attempt (async calls; handed to HTTP and JDBC as their timeouts). */
        private @Nullable Duration attemptTimeout;
        /** Exception types that are retried (with their subclasses); when set, nothing else is. */
        private List<Class<? extends Throwable>> retryOn = new ArrayList<>();
        /** Exception types that are never retried (with their subclasses); wins over retry-on. */
        private List<Class<? extends Throwable>> abortOn = new ArrayList<>();
        /** Name of the circuit breaker guarding every attempt; defaults to the breaker of the same name, if any. */
        private @Nullable String circuitBreaker;
        /**
         * Name of the retry budget asked before every retry; defaults to the budget of the same name,
         * if any, else the default budget shared by every retry of this name (ratio 0.1, 100 tokens,
         * floor 10 retries/s). {@code none}: no budget at all.
         */
        private @Nullable String budget;
        /** Name of the adaptive throttle asked before every attempt; defaults to the throttle of the same name, if any. */
        private @Nullable String throttle;
        /**
         * What this retry does inside or around another Stagger retry: {@code defer} (default: a
         * failure an inner retry decided on is not retried again), {@code retry-again} (attempts
         * multiply, asked for explicitly) or {@code refuse} (a call nested either way fails at once).
         */
        private @Nullable Nesting nesting;
        /**
         * Name of the hedging policy under {@code stagger.hedges} its calls follow (extra attempts
         * while the first is slow); defaults to the hedge of the same name, if any. {@code none}:
         * no hedging. Hedge only idempotent operations.
         */
        private @Nullable String hedge;
        /**
         * Name of the bulkhead under {@code stagger.bulkheads} whose permit every attempt holds while
         * it runs; defaults to the bulkhead of the same name, if any. Not with a hedge.
         */
        private @Nullable String bulkhead;

        public @Nullable String getPreset() { return preset; }
        public void setPreset(@Nullable String preset) { this.preset = preset; }
        public @Nullable Integer getMaxAttempts() { return maxAttempts; }
        public void setMaxAttempts(@Nullable Integer maxAttempts) { this.maxAttempts = maxAttempts; }
        public BackoffProperties getBackoff() { return backoff; }
        public void setBackoff(BackoffProperties backoff) { this.backoff = backoff; }
        public @Nullable Duration getDeadline() { return deadline; }
        public void setDeadline(@Nullable Duration deadline) { this.deadline = deadline; }
        public @Nullable Duration getAttemptTimeout() { return attemptTimeout; }
        public void setAttemptTimeout(@Nullable Duration attemptTimeout) { this.attemptTimeout = attemptTimeout; }
        public List<Class<? extends Throwable>> getRetryOn() { return retryOn; }
        public void setRetryOn(List<Class<? extends Throwable>> retryOn) { this.retryOn = retryOn; }
        public List<Class<? extends Throwable>> getAbortOn() { return abortOn; }
        public void setAbortOn(List<Class<? extends Throwable>> abortOn) { this.abortOn = abortOn; }
        public @Nullable String getCircuitBreaker() { return circuitBreaker; }
        public void setCircuitBreaker(@Nullable String circuitBreaker) { this.circuitBreaker = circuitBreaker; }
        public @Nullable String getBudget() { return budget; }
        public void setBudget(@Nullable String budget) { this.budget = budget; }
        public @Nullable String getThrottle() { return throttle; }
        public void setThrottle(@Nullable String throttle) { this.throttle = throttle; }
        public @Nullable Nesting getNesting() { return nesting; }
        public void setNesting(@Nullable Nesting nesting) { this.nesting = nesting; }
        public @Nullable String getHedge() { return hedge; }
        public void setHedge(@Nullable String hedge) { this.hedge = hedge; }
        public @Nullable String getBulkhead() { return bulkhead; }
        public void setBulkhead(@Nullable String bulkhead) { this.bulkhead = bulkhead; }
    }

    /** A backoff schedule. With nothing set: exponential from 200 ms, x2, 5 s cap, full jitter. */
    public static class BackoffProperties {
        /** {@code exponential}, {@code fixed}, {@code linear}, {@code decorrelated} or {@code none}. */
        private @Nullable String type;
        /** First wait (exponential, decorrelated), the wait (fixed), or the first wait (linear). */
        private @Nullable Duration base;
        /** Growth per retry (exponential). */
        private @Nullable Double multiplier;
        /** Added per retry (linear). */
        private @Nullable Duration step;
        /** Hard ceiling on every wait, jitter included. */
        private @Nullable Duration maxDelay;
        /**
         * {@code full}, {@code equal}, {@code proportional} (0.3), {@code proportional(f)}, {@code spread}
         * (0.2), {@code spread(f)} or {@code none}; {@code decorrelated} selects that type. The names are
         * stagger-core's {@code Jitter.parse}.
         */
        private @Nullable String jitter;
        /** Factor for {@code proportional} and {@code spread} jitter written without one, in [0, 1]. */
        private @Nullable Double jitterFactor;

        public @Nullable String getType() { return type; }
        public void setType(@Nullable String type) { this.type = type; }
        public @Nullable Duration getBase() { return base; }
        public void setBase(@Nullable Duration base) { this.base = base; }
        public @Nullable Double getMultiplier() { return multiplier; }
        public void setMultiplier(@Nullable Double multiplier) { this.multiplier = multiplier; }
        public @Nullable Duration getStep() { return step; }
        public void setStep(@Nullable Duration step) { this.step = step; }
        public @Nullable Duration getMaxDelay() { return maxDelay; }
        public void setMaxDelay(@Nullable Duration maxDelay) { this.maxDelay = maxDelay; }
        public @Nullable String getJitter() { return jitter; }
        public void setJitter(@Nullable String jitter) { this.jitter = jitter; }
        public @Nullable Double getJitterFactor() { return jitterFactor; }
        public void setJitterFactor(@Nullable Double jitterFactor) { this.jitterFactor = jitterFactor; }
    }

    /** A circuit breaker. Unset values come from {@code default}, then from Stagger's defaults. */
    public static class CircuitBreakerProperties {
        /** Failure share in (0, 1] at which the breaker opens (default 0.5). */
        private @Nullable Double failureRateThreshold;
        /** Calls the window must hold before the rate counts (default 20). */
        private @Nullable Integer minimumCalls;
        /** Open after this many failures in a row instead of by rate (0 = rate mode). */
        private @Nullable Integer consecutiveFailures;
        /** Time window of the failure rate (default 30 s). */
        private @Nullable Duration window;
        /** How long the breaker stays open before probing (default 30 s). */
        private @Nullable Duration openDuration;
        /** Probes let through when half-open (default 1). */
        private @Nullable Integer halfOpenPermits;
        /** A call slower than this counts as failing. */
        private @Nullable Duration slowCallThreshold;
        /**
         * Exceptions that count as failures, subclasses included; any other exception counts as a
         * success (empty: every exception is a failure).
         */
        private List<Class<? extends Throwable>> recordExceptions = new ArrayList<>();
        /**
         * Exceptions that count as neither a success nor a failure, subclasses included; they take
         * precedence over record-exceptions.
         */
        private List<Class<? extends Throwable>> ignoreExceptions = new ArrayList<>();

        public @Nullable Double getFailureRateThreshold() { return failureRateThreshold; }
        public void setFailureRateThreshold(@Nullable Double failureRateThreshold) { this.failureRateThreshold = failureRateThreshold; }
        public @Nullable Integer getMinimumCalls() { return minimumCalls; }
        public void setMinimumCalls(@Nullable Integer minimumCalls) { this.minimumCalls = minimumCalls; }
        public @Nullable Integer getConsecutiveFailures() { return consecutiveFailures; }
        public void setConsecutiveFailures(@Nullable Integer consecutiveFailures) { this.consecutiveFailures = consecutiveFailures; }
        public @Nullable Duration getWindow() { return window; }
        public void setWindow(@Nullable Duration window) { this.window = window; }
        public @Nullable Duration getOpenDuration() { return openDuration; }
        public void setOpenDuration(@Nullable Duration openDuration) { this.openDuration = openDuration; }
        public @Nullable Integer getHalfOpenPermits() { return halfOpenPermits; }
        public void setHalfOpenPermits(@Nullable Integer halfOpenPermits) { this.halfOpenPermits = halfOpenPermits; }
        public @Nullable Duration getSlowCallThreshold() { return slowCallThreshold; }
        public void setSlowCallThreshold(@Nullable Duration slowCallThreshold) { this.slowCallThreshold = slowCallThreshold; }
        public List<Class<? extends Throwable>> getRecordExceptions() { return recordExceptions; }
        public void setRecordExceptions(List<Class<? extends Throwable>> recordExceptions) { this.recordExceptions = recordExceptions; }
        public List<Class<? extends Throwable>> getIgnoreExceptions() { return ignoreExceptions; }
        public void setIgnoreExceptions(List<Class<? extends Throwable>> ignoreExceptions) { this.ignoreExceptions = ignoreExceptions; }
    }

    /** A retry budget shared by every retry and client naming it. */
    public static class BudgetProperties {
        /** Tokens each success deposits; a retry spends one (default 0.1: retries at most ~10 % of calls). */
        private @Nullable Double ratio;
        /** Most tokens the budget holds (default 100). */
        private @Nullable Double maxTokens;
        /** Retries always allowed per second, whatever the tokens (default 10). */
        private @Nullable Double minRetriesPerSecond;

        public @Nullable Double getRatio() { return ratio; }
        public void setRatio(@Nullable Double ratio) { this.ratio = ratio; }
        public @Nullable Double getMaxTokens() { return maxTokens; }
        public void setMaxTokens(@Nullable Double maxTokens) { this.maxTokens = maxTokens; }
        public @Nullable Double getMinRetriesPerSecond() { return minRetriesPerSecond; }
        public void setMinRetriesPerSecond(@Nullable Double minRetriesPerSecond) { this.minRetriesPerSecond = minRetriesPerSecond; }
    }

    /** An adaptive throttle (client-side, the SRE book's) shared by every retry and client naming it. */
    public static class ThrottleProperties {
        /** Requests tolerated per accepted request before refusing locally (default 2). */
        private @Nullable Double k;
        /** The trailing window requests and accepts are counted over (default 2m). */
        private @Nullable Duration window;
        /** Buckets the window rolls in (default 20). */
        private @Nullable Integer buckets;

        public @Nullable Double getK() { return k; }
        public void setK(@Nullable Double k) { this.k = k; }
        public @Nullable Duration getWindow() { return window; }
        public void setWindow(@Nullable Duration window) { this.window = window; }
        public @Nullable Integer getBuckets() { return buckets; }
        public void setBuckets(@Nullable Integer buckets) { this.buckets = buckets; }
    }

    /**
     * A hedging policy ({@code HedgePolicy}): extra attempts sent while the first is slower than
     * the delay, the first good answer wins. Unset values come from {@code default}, then from
     * Stagger's defaults.
     */
    public static class HedgeProperties {
        /** The fixed delay before a hedge, or with a percentile the delay until warm-up is over (required). */
        private @Nullable Duration delay;
        /** Hedge after this percentile of recent latencies, in (0, 100) (unset: the fixed delay). */
        private @Nullable Double percentile;
        /** The percentile delay is never shorter than this (default 1 ms). */
        private @Nullable Duration floor;
        /** Latencies seen before the percentile replaces the fixed delay (default 100). */
        private @Nullable Integer warmup;
        /** The recent latencies the percentile is taken over (default 30 s). */
        private @Nullable Duration window;
        /** Extra attempts at most, 1 to 4 (default 1); they count against the retry's max-attempts. */
        private @Nullable Integer maxHedges;
        /**
         * Hedges are refused while more than this share, in (0, 1], of the first attempts of about
         * the last second outlived the delay: an overload, not a tail (default: twice
         * (100 - percentile) %, 0.1 at p95; none with a fixed delay; 1 turns it off).
         */
        private @Nullable Double maxSlowShare;

        public @Nullable Duration getDelay() { return delay; }
        public void setDelay(@Nullable Duration delay) { this.delay = delay; }
        public @Nullable Double getPercentile() { return percentile; }
        public void setPercentile(@Nullable Double percentile) { this.percentile = percentile; }
        public @Nullable Duration getFloor() { return floor; }
        public void setFloor(@Nullable Duration floor) { this.floor = floor; }
        public @Nullable Integer getWarmup() { return warmup; }
        public void setWarmup(@Nullable Integer warmup) { this.warmup = warmup; }
        public @Nullable Duration getWindow() { return window; }
        public void setWindow(@Nullable Duration window) { this.window = window; }
        public @Nullable Integer getMaxHedges() { return maxHedges; }
        public void setMaxHedges(@Nullable Integer maxHedges) { this.maxHedges = maxHedges; }
        public @Nullable Double getMaxSlowShare() { return maxSlowShare; }
        public void setMaxSlowShare(@Nullable Double maxSlowShare) { this.maxSlowShare = maxSlowShare; }
    }

    /** {@code stagger.annotation.*}: the {@code @StaggerRetry} method advice. */
    public static class Annotation {
        /**
         * Order of the {@code @StaggerRetry} advice. The default runs it outside Spring's
         * {@code @Transactional} advice (order Ordered.LOWEST_PRECEDENCE), so each attempt is a
         * transaction of its own.
         */
        private int order = org.springframework.core.Ordered.LOWEST_PRECEDENCE - 10;
        /**
         * What a blocking {@code @StaggerRetry} method called inside a transaction that is already
         * running does: fail (refuse the call before running it), once (run it once without
         * retries, with a WARN once per method) or retry (retry it anyway: only for methods that
         * do not use the transaction's database). Only the outermost transaction can be retried.
         */
        private String insideTransaction = "fail";
        /**
         * Whether {@code @StaggerRetry("name")} may name a retry that is not configured (it then
         * gets {@code stagger.retries.default}). False: startup fails naming the closest
         * configured name, so a misspelt name is not silently a default retry.
         */
        private boolean allowUnconfiguredNames = false;

        public int getOrder() { return order; }
        public void setOrder(int order) { this.order = order; }
        public String getInsideTransaction() { return insideTransaction; }
        public void setInsideTransaction(String insideTransaction) { this.insideTransaction = insideTransaction; }
        public boolean isAllowUnconfiguredNames() { return allowUnconfiguredNames; }
        public void setAllowUnconfiguredNames(boolean allowUnconfiguredNames) { this.allowUnconfiguredNames = allowUnconfiguredNames; }
    }

    /** {@code stagger.http.*}: retrying HTTP clients for Spring's RestClient, RestTemplate and WebClient. */
    public static class Http {
        /** Named HTTP clients; get their interceptor or filter from {@code StaggerHttp}. */
        private Map<String, HttpClientProperties> clients = new LinkedHashMap<>();
        /** Client whose retries every RestClient.Builder, RestTemplateBuilder and WebClient.Builder of the context gets (none by default). */
        private @Nullable String builders;
        /** The server side of Stagger's headers. */
        private HttpServer server = new HttpServer();

        public Map<String, HttpClientProperties> getClients() { return clients; }
        public void setClients(Map<String, HttpClientProperties> clients) { this.clients = clients; }
        public @Nullable String getBuilders() { return builders; }
        public void setBuilders(@Nullable String builders) { this.builders = builders; }
        public HttpServer getServer() { return server; }
        public void setServer(HttpServer server) { this.server = server; }
    }

    /** {@code stagger.http.server.*}: what a servlet application does with the headers Stagger's clients send. */
    public static class HttpServer {
        /** The deadline filter: the caller's Stagger-Deadline-Ms bounds the request's work; decided failures answer Stagger-No-Retry. */
        private DeadlineFilterProperties deadline = new DeadlineFilterProperties();

        public DeadlineFilterProperties getDeadline() { return deadline; }
        public void setDeadline(DeadlineFilterProperties deadline) { this.deadline = deadline; }
    }

    /** {@code stagger.http.server.deadline.*}: the deadline filter, registered for every path of a servlet application. */
    public static class DeadlineFilterProperties {
        /** Register the filter (on by default whenever stagger-http and the servlet API are present). */
        private boolean enabled = true;
        /** The longest incoming deadline honoured; a longer one is capped to it (default 5 min). */
        private @Nullable Duration max;
        /** Remote addresses whose deadline header is honoured; others' is ignored (unset: every caller). */
        private @Nullable List<String> trustedAddresses;
        /** Filter order; early, so every retry the request runs is inside it. */
        private int order = -200;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public @Nullable Duration getMax() { return max; }
        public void setMax(@Nullable Duration max) { this.max = max; }
        public @Nullable List<String> getTrustedAddresses() { return trustedAddresses; }
        public void setTrustedAddresses(@Nullable List<String> trustedAddresses) { this.trustedAddresses = trustedAddresses; }
        public int getOrder() { return order; }
        public void setOrder(int order) { this.order = order; }
    }

    /** One downstream service. Unset values come from {@code stagger.http.clients.default}. */
    public static class HttpClientProperties {
        /** The retry (policy, breaker, budget) its calls use; defaults to the retry of the same name, else {@code default}. */
        private @Nullable String retry;
        /** Statuses retried for every request, replacing 408, 429, 503. */
        private @Nullable List<Integer> retryStatuses;
        /** Statuses retried only for requests safe to repeat, replacing 409, 500, 502, 504. */
        private @Nullable List<Integer> retryIfIdempotentStatuses;
        /** {@code auto} (a generated Idempotency-Key on POST and PATCH), {@code require} or {@code off}. */
        private @Nullable String idempotencyKeys;
        /** Whether the server honours Idempotency-Key, making keyed POSTs safe to repeat (default false). */
        private @Nullable Boolean keysHonoured;
        /** Whether PUT and DELETE are hedged when the client's retry hedges (default false: two at once race). */
        private @Nullable Boolean hedgeIdempotentWrites;
        /** Longest Retry-After honoured; longer hints are clamped (default 5 min). */
        private @Nullable Duration maxRetryAfter;
        /** Hosts whose Stagger-No-Retry is ignored: their answers are retried as if it were absent (default: none, every host is trusted). */
        private @Nullable List<String> untrustedHosts;

        public @Nullable String getRetry() { return retry; }
        public void setRetry(@Nullable String retry) { this.retry = retry; }
        public @Nullable List<Integer> getRetryStatuses() { return retryStatuses; }
        public void setRetryStatuses(@Nullable List<Integer> retryStatuses) { this.retryStatuses = retryStatuses; }
        public @Nullable List<Integer> getRetryIfIdempotentStatuses() { return retryIfIdempotentStatuses; }
        public void setRetryIfIdempotentStatuses(@Nullable List<Integer> s) { this.retryIfIdempotentStatuses = s; }
        public @Nullable String getIdempotencyKeys() { return idempotencyKeys; }
        public void setIdempotencyKeys(@Nullable String idempotencyKeys) { this.idempotencyKeys = idempotencyKeys; }
        public @Nullable Boolean getKeysHonoured() { return keysHonoured; }
        public void setKeysHonoured(@Nullable Boolean keysHonoured) { this.keysHonoured = keysHonoured; }
        public @Nullable Boolean getHedgeIdempotentWrites() { return hedgeIdempotentWrites; }
        public void setHedgeIdempotentWrites(@Nullable Boolean hedge) { this.hedgeIdempotentWrites = hedge; }
        public @Nullable Duration getMaxRetryAfter() { return maxRetryAfter; }
        public void setMaxRetryAfter(@Nullable Duration maxRetryAfter) { this.maxRetryAfter = maxRetryAfter; }
        public @Nullable List<String> getUntrustedHosts() { return untrustedHosts; }
        public void setUntrustedHosts(@Nullable List<String> untrustedHosts) { this.untrustedHosts = untrustedHosts; }
    }

    /** {@code stagger.transactions.*}: retrying transactions on Spring's transaction manager. */
    public static class Transactions {
        /** The retry whose policy {@code RetryingTransactionTemplate} uses; unset: 10 attempts, 5 ms x2 to 1 s, SQL classification. */
        private @Nullable String retry;

        public @Nullable String getRetry() { return retry; }
        public void setRetry(@Nullable String retry) { this.retry = retry; }
    }

    /** {@code stagger.idempotency.*}: the server-side {@code Idempotency-Key} filter. */
    public static class Idempotency {
        /** Register the filter (off by default: nothing is created unless asked). */
        private boolean enabled;
        /** URL patterns the filter covers (unset: every path, with a WARN at startup). */
        private List<String> paths = new ArrayList<>(List.of("/*"));
        /**
         * Paths within the application the filter leaves alone, each with everything under it.
         * Unset: the actuator's base path ({@code management.endpoints.web.base-path}, /actuator),
         * whose POSTs carry no key. Empty: none.
         */
        private @Nullable List<String> excludePaths;
        /** {@code jdbc} (the application's DataSource) or {@code memory} (one instance only; tests). */
        private String store = "jdbc";
        /** Prefix of the store's tables. */
        private @Nullable String tablePrefix;
        /** {@code migrate} (create or upgrade the tables, the default) or {@code validate} (a migration tool owns them). */
        private @Nullable String schemaMode;
        /** A header naming the client when no principal is logged in (an API key); only its SHA-256 is used. */
        private @Nullable String scopeHeader;
        /** {@code required} (the default: POST and PATCH must carry a key) or {@code optional} (a key is honoured when sent). */
        private @Nullable String keyRequirement;
        /** How long a completed response is replayed (default 24 h). */
        private @Nullable Duration expiry;
        /** How long a running request holds its key before another may take it over (default 1 min). */
        private @Nullable Duration lease;
        /** Filter order; after Spring Security's filter chain (-100), so the principal is known. */
        private int order = 0;
        /**
         * Run each keyed request in a transaction of the application's transaction manager on the
         * store's DataSource (PostgreSQL) and store the response in it: the handler's writes and the
         * stored response commit together or not at all (default false).
         */
        private boolean transactional;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public List<String> getPaths() { return paths; }
        public void setPaths(List<String> paths) { this.paths = paths; }
        public @Nullable List<String> getExcludePaths() { return excludePaths; }
        public void setExcludePaths(@Nullable List<String> excludePaths) { this.excludePaths = excludePaths; }
        public String getStore() { return store; }
        public void setStore(String store) { this.store = store; }
        public @Nullable String getTablePrefix() { return tablePrefix; }
        public void setTablePrefix(@Nullable String tablePrefix) { this.tablePrefix = tablePrefix; }
        public @Nullable String getSchemaMode() { return schemaMode; }
        public void setSchemaMode(@Nullable String schemaMode) { this.schemaMode = schemaMode; }
        public @Nullable String getScopeHeader() { return scopeHeader; }
        public void setScopeHeader(@Nullable String scopeHeader) { this.scopeHeader = scopeHeader; }
        public @Nullable String getKeyRequirement() { return keyRequirement; }
        public void setKeyRequirement(@Nullable String keyRequirement) { this.keyRequirement = keyRequirement; }
        public @Nullable Duration getExpiry() { return expiry; }
        public void setExpiry(@Nullable Duration expiry) { this.expiry = expiry; }
        public @Nullable Duration getLease() { return lease; }
        public void setLease(@Nullable Duration lease) { this.lease = lease; }
        public int getOrder() { return order; }
        public void setOrder(int order) { this.order = order; }
        public boolean isTransactional() { return transactional; }
        public void setTransactional(boolean transactional) { this.transactional = transactional; }
    }

    /** {@code stagger.jobs.*}: the durable job queue and its worker pools. */
    public static class Jobs {
        /** Create the job queue (its tables, on the application's DataSource) and start the pools. Off by default. */
        private boolean enabled;
        /** Prefix of the job tables (default {@code stagger_}). */
        private @Nullable String tablePrefix;
        /** {@code migrate} (create or upgrade the tables at startup, the default) or {@code validate} (a migration tool owns them). */
        private @Nullable String schemaMode;
        /** Lifecycle phase of the pools: started after, and stopped before, lower phases (default: last to start, first to stop). */
        private int phase = org.springframework.context.SmartLifecycle.DEFAULT_PHASE;
        /** Worker pools by queue name; a pool runs the @StaggerJobHandler beans of its queue. */
        private Map<String, PoolProperties> pools = new LinkedHashMap<>();

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public @Nullable String getTablePrefix() { return tablePrefix; }
        public void setTablePrefix(@Nullable String tablePrefix) { this.tablePrefix = tablePrefix; }
        public @Nullable String getSchemaMode() { return schemaMode; }
        public void setSchemaMode(@Nullable String schemaMode) { this.schemaMode = schemaMode; }
        public int getPhase() { return phase; }
        public void setPhase(int phase) { this.phase = phase; }
        public Map<String, PoolProperties> getPools() { return pools; }
        public void setPools(Map<String, PoolProperties> pools) { this.pools = pools; }
    }

    /** A worker pool for one queue. Unset values come from {@code stagger.jobs.pools.default}. */
    public static class PoolProperties {
        /** Jobs run at once (default 4). */
        private @Nullable Integer concurrency;
        /** How often an idle pool looks for due jobs (default 1 s; local enqueues and PostgreSQL NOTIFY wake it at once). */
        private @Nullable Duration pollInterval;
        /** How long a claimed job is reserved without a heartbeat (default 30 s). */
        private @Nullable Duration lease;
        /** How long stopping waits for running jobs before interrupting them (default 30 s). */
        private @Nullable Duration shutdownTimeout;
        /** A retry under {@code stagger.retries} whose policy failed jobs follow (default: RetryPolicy.background()). */
        private @Nullable String retry;
        /**
         * A failure a Stagger retry inside the handler decided on: {@code defer} (default: the job
         * goes DEAD with NOT_RETRYABLE, not retried again) or {@code retry-again} (the job's policy
         * retries it; attempts multiply over the job's waits).
         */
        private @Nullable Nesting nesting;

        public @Nullable Integer getConcurrency() { return concurrency; }
        public void setConcurrency(@Nullable Integer concurrency) { this.concurrency = concurrency; }
        public @Nullable Duration getPollInterval() { return pollInterval; }
        public void setPollInterval(@Nullable Duration pollInterval) { this.pollInterval = pollInterval; }
        public @Nullable Duration getLease() { return lease; }
        public void setLease(@Nullable Duration lease) { this.lease = lease; }
        public @Nullable Duration getShutdownTimeout() { return shutdownTimeout; }
        public void setShutdownTimeout(@Nullable Duration shutdownTimeout) { this.shutdownTimeout = shutdownTimeout; }
        public @Nullable String getRetry() { return retry; }
        public void setRetry(@Nullable String retry) { this.retry = retry; }
        public @Nullable Nesting getNesting() { return nesting; }
        public void setNesting(@Nullable Nesting nesting) { this.nesting = nesting; }
    }

    /** {@code stagger.logging.*}: structured retry log lines through the application's logging. */
    public static class Logging {
        /** One key-value log line per retry and per give-up, logger {@code dev.stagger.retry}. */
        private boolean enabled = true;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
    }

    /** {@code stagger.metrics.*}: Micrometer meters for every Stagger component. */
    public static class Metrics {
        /** Bind every Stagger retry, breaker, budget and HTTP client to the MeterRegistry. */
        private boolean enabled = true;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
    }

    /** {@code stagger.observation.*}: Micrometer observations of retries. */
    public static class Observation {
        /** Observe every Stagger retry (a span per call, a child per attempt) when an ObservationRegistry bean exists. */
        private boolean enabled = true;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
    }

    /** {@code stagger.context-propagation.*}: the caller's context on the threads of its hedges. */
    public static class ContextPropagation {
        /**
         * Run the attempts a call makes off its caller's thread (hedges, async attempts started by
         * the clock) with the caller's thread-local context, as Micrometer Context Propagation
         * captures it (the current observation and span; whatever else is registered with it),
         * when io.micrometer:context-propagation is on the class path.
         */
        private boolean enabled = true;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
    }

    /** {@code stagger.health.*}: the circuit breakers' health contributor. */
    public static class Health {
        /** Health status of a breaker in each state; the contributor reports the worst. */
        private Map<String, String> circuitBreakerStatus = new LinkedHashMap<>(
                Map.of("closed", "UP", "half-open", "UP", "open", "UNKNOWN"));

        public Map<String, String> getCircuitBreakerStatus() { return circuitBreakerStatus; }
        public void setCircuitBreakerStatus(Map<String, String> circuitBreakerStatus) { this.circuitBreakerStatus = circuitBreakerStatus; }
    }

    /** {@code stagger.spring-retry.*}: Spring Framework 7's {@code RetryTemplate} and {@code @Retryable} run by Stagger. */
    public static class SpringRetry {
        /** A retry under {@code stagger.retries}: defines a {@code RetryTemplate} bean (a StaggerRetryTemplate) running it. */
        private @Nullable String template;
        /** Run Spring's {@code @Retryable} methods with Stagger retries instead of {@code @EnableResilientMethods} (default false). */
        private boolean annotations;
        /** The retry every {@code @Retryable} method uses; unset: the retry named {@code Class.method} (the {@code default} entry). */
        private @Nullable String retry;

        public @Nullable String getTemplate() { return template; }
        public void setTemplate(@Nullable String template) { this.template = template; }
        public boolean isAnnotations() { return annotations; }
        public void setAnnotations(boolean annotations) { this.annotations = annotations; }
        public @Nullable String getRetry() { return retry; }
        public void setRetry(@Nullable String retry) { this.retry = retry; }
    }
}
