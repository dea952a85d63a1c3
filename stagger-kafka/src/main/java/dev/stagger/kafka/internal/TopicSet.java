package dev.stagger.kafka.internal;

import dev.stagger.Backoff;
import dev.stagger.Clock;
import dev.stagger.Jitter;
import dev.stagger.RetryEngine;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryState;
import dev.stagger.internal.DelayLevels;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The topics around one work topic {@code T}: a delay topic {@code T.stagger.retry-<millis>} per
 * delay level and the dead-letter topic {@code T.stagger.dlt}. Every record in one delay topic
 * waits the same time, so its partitions' heads become due in order and a short retry never
 * waits behind a long one: they sit in different topics. Immutable.
 */
public final class TopicSet {
    /**
     * The waits between describes of a work topic the broker does not describe yet (its metadata
     * catching up with the creation): 50 ms doubling to 1 s, equal jitter; the caller's timeout is
     * the deadline.
     */
    static final RetryPolicy DESCRIBE_WAITS = RetryPolicy.builder().maxAttempts(Integer.MAX_VALUE)
            .backoff(Backoff.exponential(Duration.ofMillis(50)).maxDelay(Duration.ofSeconds(1)).jitter(Jitter.equal()))
            .build();

    private final String topic;
    private final long[] levelsMillis;
    private final Map<String, Long> levelOfTopic = new HashMap<>();
    /** The delay and dead-letter topics' ids the last {@link #create} saw. */
    private final Map<String, Uuid> ids = new HashMap<>();

    /** @param levelsMillis the delay levels, strictly ascending, each at least 1 ms */
    public TopicSet(String topic, long[] levelsMillis) {
        this.topic = topic;
        this.levelsMillis = levelsMillis.clone();
        for (long level : levelsMillis) {
            levelOfTopic.put(retryTopic(topic, level), level);
        }
    }

    public static String retryTopic(String topic, long levelMillis) {
        return topic + ".stagger.retry-" + levelMillis;
    }

    public static String deadTopic(String topic) {
        return topic + ".stagger.dlt";
    }

    public String topic() {
        return topic;
    }

    public String deadTopic() {
        return deadTopic(topic);
    }

    public List<String> retryTopics() {
        return Arrays.stream(levelsMillis).mapToObj(l -> retryTopic(topic, l)).toList();
    }

    /** The work topic and the delay topics: what the consumer subscribes to. */
    public List<String> consumed() {
        List<String> all = new ArrayList<>();
        all.add(topic);
        all.addAll(retryTopics());
        return all;
    }

    /** The delay topic a delay of {@code delayMillis} (> 0) waits in ({@link DelayLevels#levelFor}). */
    public String retryTopicFor(long delayMillis) {
        return retryTopic(topic, DelayLevels.levelFor(levelsMillis, delayMillis));
    }

    /** The level of delay topic {@code name}; empty for the work topic. */
    public Optional<Long> levelOf(String name) {
        return Optional.ofNullable(levelOfTopic.get(name));
    }

    /**
     * Creates what is missing: the work topic (with the broker's defaults) when {@code createTopic},
     * and the delay and dead-letter topics with as many partitions as the work topic; those with
     * fewer (the work topic gained partitions) get as many.
     *
     * <p>A broker answers a describe from its metadata, which catches up with a topic's creation
     * only after a while (longer on a loaded machine): a work topic created just now, by another
     * client or by this one after a describe that did not see it, is described again after waits
     * from {@link #DESCRIBE_WAITS} on {@code clock}, until {@code timeoutMillis} have passed.
     *
     * <p>A delay or dead-letter topic deleted and created again since the last call (by this
     * client or another: its topic id changed, or this call created a topic the last one saw) is
     * named in the answer: its offsets start again at 0, so a position or committed offset of the
     * deleted topic means nothing in it.
     *
     * @return the delay and dead-letter topics created again since the last call (empty on the first)
     * @throws IllegalStateException when the work topic is missing and not to be created, or was
     *     created by another client and is not described within {@code timeoutMillis}
     */
    public Set<String> create(Admin admin, boolean createTopic, long timeoutMillis, Clock clock)
            throws ExecutionException, InterruptedException, TimeoutException {
        int partitions = workPartitions(admin, createTopic, timeoutMillis, clock);
        List<NewTopic> around = new ArrayList<>();
        for (String name : retryTopics()) {
            around.add(new NewTopic(name, Optional.of(partitions), Optional.empty()));
        }
        around.add(new NewTopic(deadTopic(), Optional.of(partitions), Optional.empty()));
        Set<String> created = createIfMissing(admin, around, timeoutMillis);
        Map<String, TopicDescription> described = growToMatch(admin, around.stream().map(NewTopic::name).toList(),
                partitions, timeoutMillis);
        return createdAgain(created, described);
    }

    /** Compares the topics' ids with those the last {@link #create} saw, and keeps these. */
    private synchronized Set<String> createdAgain(Set<String> created, Map<String, TopicDescription> described) {
        Set<String> again = new HashSet<>();
        for (Map.Entry<String, TopicDescription> d : described.entrySet()) {
            Uuid now = d.getValue().topicId();
            Uuid before = ids.put(d.getKey(), now);
            if (before != null && !before.equals(now)) {
                again.add(d.getKey());
            }
        }
        for (String name : created) {
            if (ids.containsKey(name) && !described.containsKey(name)) {
                again.add(name); // created by this call and not described yet: the id seen before is the old topic's
                ids.remove(name);
            }
        }
        return again;
    }

    /**
     * The work topic's partition count: described, or created (the creation's own answer) when it
     * is not described and {@code createTopic}; a topic not described (yet) is described again on
     * {@link #DESCRIBE_WAITS}' schedule, within {@code timeoutMillis}.
     */
    private int workPartitions(Admin admin, boolean createTopic, long timeoutMillis, Clock clock)
            throws ExecutionException, InterruptedException, TimeoutException {
        RetryEngine waits = RetryEngine.of("topics", DESCRIBE_WAITS.toBuilder().deadline(Duration.ofMillis(timeoutMillis))
                .build()).withClock(clock);
        RetryState state = waits.firstAttempt();
        boolean exists = false;
        while (true) {
            TopicDescription work = describe(admin, Set.of(topic), timeoutMillis).get(topic);
            if (work != null) {
                return work.partitions().size();
            }
            if (createTopic && !exists) {
                Optional<Integer> created = createWorkTopic(admin, timeoutMillis);
                if (created.isPresent()) {
                    return created.get();
                }
                exists = true; // created by another client meanwhile: the broker does not describe it yet
            }
            RetryEngine.Verdict verdict = waits.decide(state, null,
                    new UnknownTopicOrPartitionException("topic " + topic + " not described"));
            if (!verdict.isRetry()) {
                throw new IllegalStateException(exists
                        ? "topic " + topic + " was created by another client but was not described within " + timeoutMillis + " ms"
                        : "topic " + topic + " does not exist (createTopic is off; not described within " + timeoutMillis + " ms)");
            }
            clock.sleep(verdict.delay().toNanos());
            state = verdict.next().orElseThrow();
        }
    }

    /**
     * Gives the topics {@code names} {@code partitions} partitions where they have fewer: the work
     * topic gained partitions, and a key-order copy goes to the partition of its record's number.
     */
    private static Map<String, TopicDescription> growToMatch(Admin admin, List<String> names, int partitions,
                                                             long timeoutMillis)
            throws InterruptedException, TimeoutException, ExecutionException {
        Map<String, NewPartitions> grow = new HashMap<>();
        Map<String, TopicDescription> described = describe(admin, Set.copyOf(names), timeoutMillis);
        described.forEach((name, d) -> {
            if (d.partitions().size() < partitions) {
                grow.put(name, NewPartitions.increaseTo(partitions));
            }
        });
        if (grow.isEmpty()) {
            return described;
        }
        for (var f : admin.createPartitions(grow).values().values()) {
            try {
                f.get(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof InvalidPartitionsException)) { // grown by another consumer meanwhile
                    throw e;
                }
            }
        }
        return described;
    }

    /** Creates the work topic with the broker's defaults: its partition count, or empty when it exists already. */
    private Optional<Integer> createWorkTopic(Admin admin, long timeoutMillis)
            throws InterruptedException, TimeoutException, ExecutionException {
        var created = admin.createTopics(List.of(new NewTopic(topic, Optional.empty(), Optional.empty())));
        try {
            return Optional.of(created.numPartitions(topic).get(timeoutMillis, TimeUnit.MILLISECONDS));
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
            return Optional.empty();
        }
    }

    private static Map<String, TopicDescription> describe(Admin admin, Set<String> names, long timeoutMillis)
            throws InterruptedException, TimeoutException, ExecutionException {
        Map<String, TopicDescription> out = new HashMap<>();
        for (var e : admin.describeTopics(names).topicNameValues().entrySet()) {
            try {
                out.put(e.getKey(), e.getValue().get(timeoutMillis, TimeUnit.MILLISECONDS));
            } catch (ExecutionException x) {
                if (!(x.getCause() instanceof UnknownTopicOrPartitionException)) {
                    throw x;
                }
            }
        }
        return out;
    }

    /** Creates those of {@code topics} that are missing; returns the names of those it created. */
    private static Set<String> createIfMissing(Admin admin, List<NewTopic> topics, long timeoutMillis)
            throws InterruptedException, TimeoutException, ExecutionException {
        Set<String> created = new HashSet<>();
        for (var f : admin.createTopics(topics).values().entrySet()) {
            try {
                f.getValue().get(timeoutMillis, TimeUnit.MILLISECONDS);
                created.add(f.getKey());
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }
        return created;
    }
}
