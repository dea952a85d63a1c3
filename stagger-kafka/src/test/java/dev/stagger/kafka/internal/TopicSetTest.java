package dev.stagger.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testing.VirtualClock;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Creating the topics when the broker's metadata lags behind a creation: an admin client that
 * answers {@link UnknownTopicOrPartitionException} to describes of the work topic for a while (as
 * a loaded broker does right after the topic was created), on a virtual clock. The describes are
 * repeated after the waits of {@link TopicSet#DESCRIBE_WAITS}, growing, never in a hot loop, up to
 * the timeout.
 */
class TopicSetTest {
    private static final long TIMEOUT_MILLIS = 10_000;
    private final VirtualClock clock = new VirtualClock();
    private final TopicSet topics = new TopicSet("orders", new long[] {100, 1_000});

    /** A broker where "orders" exists with 3 partitions; its describes say unknown for the first {@code unknownFor}. */
    private final class LaggingBroker {
        final int unknownFor;
        final AtomicInteger workDescribes = new AtomicInteger();
        final AtomicInteger workCreates = new AtomicInteger();
        final Map<String, Integer> created = new ConcurrentHashMap<>();
        /** Each delay and dead-letter topic's id: a new one when it is created again. */
        final Map<String, Uuid> ids = new ConcurrentHashMap<>();
        final boolean workExists;

        LaggingBroker(int unknownFor, boolean workExists) {
            this.unknownFor = unknownFor;
            this.workExists = workExists;
        }

        Admin admin() {
            return (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(), new Class<?>[] {Admin.class},
                    (proxy, method, args) -> switch (method.getName()) {
                        case "describeTopics" -> describe(args[0] instanceof TopicCollection.TopicNameCollection names
                                ? names.topicNames() : cast(args[0]));
                        case "createTopics" -> create(cast(args[0]));
                        default -> throw new UnsupportedOperationException(method.getName());
                    });
        }

        @SuppressWarnings("unchecked")
        private static <T> Collection<T> cast(Object o) {
            return (Collection<T>) o;
        }

        private DescribeTopicsResult describe(Collection<String> names) {
            Map<String, KafkaFuture<TopicDescription>> out = new HashMap<>();
            for (String name : names) {
                boolean known = name.equals("orders")
                        ? workDescribes.incrementAndGet() > unknownFor && (workExists || workCreates.get() > 0)
                        : created.containsKey(name);
                int partitions = name.equals("orders") ? 3 : created.getOrDefault(name, 0);
                out.put(name, known ? KafkaFuture.completedFuture(description(name, partitions, ids.get(name)))
                        : failed(new UnknownTopicOrPartitionException("This server does not host this topic-partition.")));
            }
            return new DescribeTopicsResult(null, out) {
            };
        }

        private CreateTopicsResult create(Collection<NewTopic> newTopics) {
            Map<String, KafkaFuture<CreateTopicsResult.TopicMetadataAndConfig>> out = new HashMap<>();
            for (NewTopic t : newTopics) {
                if (t.name().equals("orders")) {
                    out.put(t.name(), workExists || workCreates.getAndIncrement() > 0
                            ? failed(new TopicExistsException("Topic 'orders' already exists."))
                            : KafkaFuture.completedFuture(new CreateTopicsResult.TopicMetadataAndConfig(null, 3, 1, null)));
                } else if (created.containsKey(t.name())) {
                    out.put(t.name(), failed(new TopicExistsException("Topic '" + t.name() + "' already exists.")));
                } else {
                    created.put(t.name(), t.numPartitions());
                    ids.put(t.name(), Uuid.randomUuid());
                    out.put(t.name(), KafkaFuture.completedFuture(
                            new CreateTopicsResult.TopicMetadataAndConfig(null, t.numPartitions(), 1, null)));
                }
            }
            return new CreateTopicsResult(out) {
            };
        }
    }

    private static TopicDescription description(String name, int partitions, @Nullable Uuid id) {
        Node node = new Node(1, "127.0.0.1", 9092);
        return new TopicDescription(name, false, java.util.stream.IntStream.range(0, partitions)
                .mapToObj(p -> new TopicPartitionInfo(p, node, List.of(node), List.of(node))).toList(), Set.of(),
                id == null ? Uuid.ZERO_UUID : id);
    }

    private static <T> KafkaFuture<T> failed(Throwable e) {
        KafkaFutureImpl<T> f = new KafkaFutureImpl<>();
        f.completeExceptionally(e);
        return f;
    }

    @Test
    void aWorkTopicCreatedJustNowByAnotherClientIsDescribedAgainOnTheSchedule() throws Exception {
        // another client created it: this one's create says it exists, its describes do not see it for a while
        LaggingBroker broker = new LaggingBroker(8, true);
        topics.create(broker.admin(), true, TIMEOUT_MILLIS, clock);

        assertThat(broker.workDescribes).hasValue(9);
        assertThat(broker.created).containsOnlyKeys("orders.stagger.retry-100", "orders.stagger.retry-1000",
                "orders.stagger.dlt").allSatisfy((name, partitions) -> assertThat(partitions).isEqualTo(3));
        assertWaitedOnTheSchedule(8); // after each describe that did not see it
    }

    @Test
    void aDelayTopicDeletedAndCreatedAgainByAnotherClientIsNamedByItsNewIdOnce() throws Exception {
        LaggingBroker broker = new LaggingBroker(0, true);
        assertThat(topics.create(broker.admin(), true, TIMEOUT_MILLIS, clock)).as("the first call knows no earlier topic")
                .isEmpty();
        broker.ids.put("orders.stagger.retry-100", Uuid.randomUuid()); // another consumer created it again

        assertThat(topics.create(broker.admin(), true, TIMEOUT_MILLIS, clock)).containsExactly("orders.stagger.retry-100");
        assertThat(topics.create(broker.admin(), true, TIMEOUT_MILLIS, clock)).isEmpty();
    }

    @Test
    void aDelayTopicThisCallCreatedAgainIsNamedEvenBeforeTheBrokerDescribesIt() throws Exception {
        LaggingBroker broker = new LaggingBroker(0, true);
        topics.create(broker.admin(), true, TIMEOUT_MILLIS, clock);
        broker.created.remove("orders.stagger.retry-1000"); // deleted: this call creates it, and its describe lags
        Admin admin = broker.admin();
        Admin notDescribingTheNewTopic = (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(),
                new Class<?>[] {Admin.class}, (proxy, method, args) -> {
                    Object answer = method.invoke(admin, args);
                    if (method.getName().equals("createTopics")) {
                        broker.created.remove("orders.stagger.retry-1000"); // created, not yet in the metadata
                    }
                    return answer;
                });

        assertThat(topics.create(notDescribingTheNewTopic, true, TIMEOUT_MILLIS, clock))
                .containsExactly("orders.stagger.retry-1000");
    }

    @Test
    void withoutCreatingTheWorkTopicOneNotDescribedYetIsWaitedForNotDeclaredMissing() throws Exception {
        LaggingBroker broker = new LaggingBroker(5, true);
        topics.create(broker.admin(), false, TIMEOUT_MILLIS, clock);

        assertThat(broker.workDescribes).hasValue(6);
        assertThat(broker.workCreates).hasValue(0);
        assertThat(broker.created).hasSize(3);
        assertWaitedOnTheSchedule(5);
    }

    @Test
    void aTopicThisClientCreatedIsCountedFromTheCreationsAnswerWithoutWaiting() throws Exception {
        LaggingBroker broker = new LaggingBroker(Integer.MAX_VALUE, false);
        topics.create(broker.admin(), true, TIMEOUT_MILLIS, clock);

        assertThat(broker.workCreates).hasValue(1);
        assertThat(broker.created.values()).containsOnly(3);
        assertThat(clock.sleeps()).isEmpty();
    }

    @Test
    void aTopicNeverDescribedEndsAtTheTimeoutAfterBoundedWaits() {
        LaggingBroker broker = new LaggingBroker(Integer.MAX_VALUE, true);
        assertThatThrownBy(() -> topics.create(broker.admin(), true, TIMEOUT_MILLIS, clock))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("topic orders was created by another client but was not described within 10000 ms");
        assertTimedOutWithoutHotLoop(broker);
    }

    @Test
    void aMissingWorkTopicNotToBeCreatedIsNamedAfterTheTimeout() {
        LaggingBroker broker = new LaggingBroker(Integer.MAX_VALUE, true);
        assertThatThrownBy(() -> topics.create(broker.admin(), false, TIMEOUT_MILLIS, clock))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("topic orders does not exist (createTopic is off; not described within 10000 ms)");
        assertThat(broker.workCreates).hasValue(0);
        assertTimedOutWithoutHotLoop(broker);
    }

    /** {@code count} waits, growing from 25-50 ms (equal jitter on 50 ms doubling) up to the 1 s cap. */
    private void assertWaitedOnTheSchedule(int count) {
        List<Duration> sleeps = clock.sleeps();
        assertThat(sleeps).hasSize(count);
        for (int i = 0; i < count; i++) {
            long full = Math.min(1_000, 50L << i);
            assertThat(sleeps.get(i)).as("wait %d", i + 1).isBetween(Duration.ofMillis(full / 2), Duration.ofMillis(full));
        }
    }

    private void assertTimedOutWithoutHotLoop(LaggingBroker broker) {
        Duration waited = clock.sleeps().stream().reduce(Duration.ZERO, Duration::plus);
        assertThat(waited).isLessThanOrEqualTo(Duration.ofMillis(TIMEOUT_MILLIS)).isGreaterThan(Duration.ofMillis(TIMEOUT_MILLIS / 2));
        // 50 ms doubling to 1 s with equal jitter: at most 5 + 20 waits in 10 s
        assertThat(broker.workDescribes.get()).isBetween(8, 30);
        assertThat(clock.sleeps()).allSatisfy(d -> assertThat(d).isGreaterThanOrEqualTo(Duration.ofMillis(25)));
    }
}
