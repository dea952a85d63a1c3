package dev.stagger;

import static org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt.forClasses;

import dev.stagger.CircuitBreaker.State;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.UnaryOperator;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * The operations the Lincheck tests run against a {@link CircuitBreaker} on a {@link VirtualClock}:
 * asking for a permit, finishing it with a success, a failure or a release, reading the state and
 * the metrics, forcing open, resetting, and moving the clock. Each caller (a Lincheck thread) keeps the permits
 * it holds on its own stack, so finishing one is the caller's own deterministic choice; the
 * sequential specification ({@link BreakerModel}) keeps the same stacks.
 *
 * <p>Concrete tests extend this with one configuration and say which scenarios to explore.
 */
@Param(name = "caller", gen = ThreadIdGen.class)
public abstract class BreakerHarness {
    static final int CALLERS = 8;
    /** Bounds that keep every Lincheck test of the build within a few seconds on two cores. */
    static final int SCENARIO_INVOCATIONS = 500;
    static final int ITERATIONS = 6;
    static final int MODEL_CHECKING_INVOCATIONS = 150;
    static final int STRESS_INVOCATIONS = 400;
    private static final IOException FAILURE = new IOException("down");

    private final BreakerModel.Config config;
    private final VirtualClock clock = new VirtualClock();
    private final CircuitBreaker breaker;
    @SuppressWarnings("unchecked")
    private final Deque<CircuitBreaker.Permit>[] held = (Deque<CircuitBreaker.Permit>[]) new Deque<?>[CALLERS];

    protected BreakerHarness(BreakerModel.Config config) {
        this(config, UnaryOperator.identity());
    }

    /** With {@code tweak} applied to the configuration's builder (package-private knobs). */
    protected BreakerHarness(BreakerModel.Config config, UnaryOperator<CircuitBreaker.Builder> tweak) {
        this.config = config;
        this.breaker = tweak.apply(config.builder(clock)).build();
        for (int i = 0; i < CALLERS; i++) {
            held[i] = new ArrayDeque<>();
        }
    }

    @Operation
    public boolean acquire(@Param(name = "caller") int caller) {
        CircuitBreaker.Permit permit = breaker.tryAcquirePermission();
        if (!permit.isGranted()) {
            return false;
        }
        held[caller].push(permit);
        return true;
    }

    @Operation
    public boolean succeed(@Param(name = "caller") int caller) {
        CircuitBreaker.Permit permit = held[caller].poll();
        if (permit == null) {
            return false;
        }
        breaker.record(permit, "ok", null);
        return true;
    }

    @Operation
    public boolean fail(@Param(name = "caller") int caller) {
        CircuitBreaker.Permit permit = held[caller].poll();
        if (permit == null) {
            return false;
        }
        breaker.record(permit, null, FAILURE);
        return true;
    }

    @Operation
    public boolean release(@Param(name = "caller") int caller) {
        CircuitBreaker.Permit permit = held[caller].poll();
        if (permit == null) {
            return false;
        }
        breaker.releasePermission(permit);
        return true;
    }

    @Operation
    public State state() {
        return breaker.state();
    }

    @Operation
    public BreakerModel.Reading metrics() {
        return BreakerModel.Reading.of(breaker.metrics());
    }

    @Operation
    public void forceOpen() {
        breaker.forceOpen();
    }

    @Operation
    public void reset() {
        breaker.reset();
    }

    /**
     * Moves the clock. Never run by two threads at once: {@link VirtualClock#advance} computes its
     * target from the time it was called at, so two concurrent moves of one step add up to one step.
     */
    @Operation(nonParallelGroup = "clock")
    public void advance() {
        clock.advance(config.step());
    }

    // ---- how the tests explore ----

    /** The configuration's specification: the subclass's nested {@code Model}. */
    private Class<?> model() {
        for (Class<?> nested : getClass().getDeclaredClasses()) {
            if (BreakerModel.class.isAssignableFrom(nested)) {
                return nested;
            }
        }
        throw new IllegalStateException(getClass() + " declares no BreakerModel");
    }

    @Test
    void modelChecking() {
        modelCheck(getClass(), model());
    }

    @Test
    void stress() {
        stressCheck(getClass(), model(), 3);
    }

    /**
     * The model checker, told what it need not interleave inside: the virtual clock's methods
     * (atomic under its lock), the {@link java.util.concurrent.atomic.LongAdder} totals that no
     * checked result reads, and the callers' own permit stacks (each used by one thread).
     */
    static ModelCheckingOptions modelChecker() {
        return new ModelCheckingOptions()
                .addGuarantee(forClasses(VirtualClock.class.getName()).allMethods().treatAsAtomic())
                .addGuarantee(forClasses(LongAdder.class.getName()).allMethods().treatAsAtomic())
                .addGuarantee(forClasses(ArrayDeque.class.getName()).allMethods().treatAsAtomic());
    }

    /** Every interleaving Lincheck's model checker tries of one hand-written scenario. */
    static void explore(Class<?> test, Class<?> model, ExecutionScenario scenario) {
        modelChecker().iterations(0).invocationsPerIteration(SCENARIO_INVOCATIONS)
                .addCustomScenario(scenario).sequentialSpecification(model).check(test);
    }

    /** Random scenarios of every operation, model-checked. */
    static void modelCheck(Class<?> test, Class<?> model) {
        modelCheck(test, model, 3);
    }

    /** Random scenarios of every operation, model-checked, {@code actorsBefore} of them before the parallel part. */
    static void modelCheck(Class<?> test, Class<?> model, int actorsBefore) {
        modelChecker().iterations(ITERATIONS).invocationsPerIteration(MODEL_CHECKING_INVOCATIONS)
                .threads(2).actorsPerThread(3).actorsBefore(actorsBefore).actorsAfter(2)
                .sequentialSpecification(model).check(test);
    }

    /** Random scenarios of every operation on three threads at once, {@code actorsBefore} before the parallel part. */
    static void stressCheck(Class<?> test, Class<?> model, int actorsBefore) {
        new StressOptions().iterations(ITERATIONS).invocationsPerIteration(STRESS_INVOCATIONS)
                .threads(3).actorsPerThread(3).actorsBefore(actorsBefore).actorsAfter(2)
                .sequentialSpecification(model).check(test);
    }

    // ---- hand-written scenarios ----

    static Actor op(String name, Object... args) {
        return op(BreakerHarness.class, name, args);
    }

    /** Operation {@code name} of test class {@code in}, with {@code args}. */
    static Actor op(Class<?> in, String name, Object... args) {
        for (Method m : in.getDeclaredMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == args.length) {
                return new Actor(m, Arrays.asList(args), false, false, false, false, false);
            }
        }
        throw new IllegalArgumentException(name);
    }

    static ExecutionScenario scenario(List<Actor> init, List<List<Actor>> parallel, List<Actor> post) {
        return new ExecutionScenario(init, parallel, post, null);
    }
}
