package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.kafka.KafkaHandler;
import dev.stagger.kafka.KafkaMessage;
import dev.stagger.testsupport.kafka.TestKafka;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@link StaggerKafkaListener} methods as the handlers of Stagger's Kafka consumers, Spring Kafka's
 * {@code @KafkaListener} way: each parameter type on the real broker, a retry through a delay topic,
 * a consumer without a property entry, a proxied bean; startup errors naming the method.
 */
class StaggerKafkaListenerTest {
    private final String bootstrap = TestKafka.reachableBootstrap();
    private final String values = TestKafka.uniqueTopic("listener-values");
    private final String records = TestKafka.uniqueTopic("listener-records");
    private final String messages = TestKafka.uniqueTopic("listener-messages");

    /** Three listener methods, moved over from {@code @KafkaListener} by swapping the annotation. */
    static class OrderListeners {
        final BlockingQueue<String> seen = new LinkedBlockingQueue<>();

        @StaggerKafkaListener(consumer = "${test.values}")
        void onValue(String value) {
            seen.add("value " + value);
        }

        @StaggerKafkaListener(topic = "${test.records}") // no stagger.kafka.consumers entry: the defaults
        void onRecord(ConsumerRecord<String, byte[]> record) {
            seen.add("record " + record.topic() + " " + record.key() + "=" + new String(record.value(), StandardCharsets.UTF_8));
        }

        @StaggerKafkaListener(consumer = "${test.messages}")
        void onMessage(KafkaMessage message) {
            String value = new String(message.value(), StandardCharsets.UTF_8);
            seen.add("message " + value + " attempt " + message.attempt());
            if (message.attempt() == 1 && value.startsWith("fail")) {
                throw new IllegalStateException("first attempt of " + value); // retried through a delay topic
            }
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner().withConfiguration(StaggerKafkaConsumersTest.KAFKA)
                .withPropertyValues("spring.kafka.bootstrap-servers=" + bootstrap, "test.values=" + values,
                        "test.records=" + records, "test.messages=" + messages,
                        "stagger.kafka.consumers." + values + ".concurrency=2",
                        "stagger.kafka.consumers." + messages + ".delay-levels=20ms,100ms",
                        "stagger.kafka.consumers." + messages + ".retry=quick",
                        "stagger.retries.quick.max-attempts=3", "stagger.retries.quick.backoff.type=fixed",
                        "stagger.retries.quick.backoff.base=10ms");
    }

    @Test
    void annotatedMethodsTakingTheValueTheRecordOrTheMessageHandleTheirConsumersRecords() throws Exception {
        runner().withBean(OrderListeners.class, OrderListeners::new).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(StaggerKafkaConsumers.class).consumers()).containsOnlyKeys(values, messages, records);
            StaggerKafkaConsumersTest.send(bootstrap, values, "k1", "hello");
            StaggerKafkaConsumersTest.send(bootstrap, records, "k2", "a record");
            StaggerKafkaConsumersTest.send(bootstrap, messages, "k3", "fail-once");
            BlockingQueue<String> seen = context.getBean(OrderListeners.class).seen;
            List<String> got = new ArrayList<>();
            while (got.size() < 4) {
                String next = seen.poll(30, TimeUnit.SECONDS);
                assertThat(next).as("handled so far: %s", got).isNotNull();
                got.add(next);
            }
            assertThat(got).containsExactlyInAnyOrder("value hello", "record " + records + " k2=a record",
                    "message fail-once attempt 1", "message fail-once attempt 2");
        });
    }

    /** A listener bean behind a proxy (a transaction's, say): the method is called through the proxy. */
    @Test
    void aProxiedBeansMethodIsCalledThroughTheProxy() throws Exception {
        List<String> advised = new ArrayList<>();
        runner().withBean(OrderListeners.class, () -> {
            ProxyFactory proxy = new ProxyFactory(new OrderListeners());
            proxy.setProxyTargetClass(true);
            proxy.addAdvice((org.aopalliance.intercept.MethodInterceptor) invocation -> {
                synchronized (advised) {
                    advised.add(invocation.getMethod().getName());
                }
                return invocation.proceed();
            });
            return (OrderListeners) proxy.getProxy();
        }).run(context -> {
            assertThat(context).hasNotFailed();
            StaggerKafkaConsumersTest.send(bootstrap, values, "k", "through the proxy");
            assertThat(TestKafka.await(java.time.Duration.ofSeconds(30), () -> {
                synchronized (advised) {
                    return advised.contains("onValue");
                }
            })).isTrue();
        });
    }

    static class BadSignature {
        @StaggerKafkaListener(consumer = "orders")
        void on(Integer order) {
        }
    }

    static class Returning {
        @StaggerKafkaListener(consumer = "orders")
        String on(String order) {
            return order;
        }
    }

    static class TwoForOne {
        @StaggerKafkaListener(consumer = "orders")
        void first(String order) {
        }

        @StaggerKafkaListener(topic = "orders")
        void second(KafkaMessage order) {
        }
    }

    static class OneForOrders {
        @StaggerKafkaListener(consumer = "orders")
        void on(byte[] order) {
        }
    }

    static class NoConsumer {
        @StaggerKafkaListener
        void on(byte[] order) {
        }
    }

    private ApplicationContextRunner offline() {
        return new ApplicationContextRunner().withConfiguration(StaggerKafkaConsumersTest.KAFKA)
                .withPropertyValues("spring.kafka.bootstrap-servers=" + bootstrap);
    }

    @Test
    void aSignatureNotSupportedFailsStartupNamingTheMethodAndWhatItMayTake() {
        for (Class<?> type : List.of(BadSignature.class, Returning.class)) {
            offline().withBean(type).run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).hasRootCauseInstanceOf(BeanInitializationException.class);
                assertThat(StaggerKafkaConsumersTest.root(context.getStartupFailure()))
                        .hasMessageContaining("@StaggerKafkaListener method " + type.getName() + ".on")
                        .hasMessageContaining("must take one parameter: the value (byte[] or String), a ConsumerRecord");
            });
        }
    }

    @Test
    void twoMethodsForOneConsumerFailStartupNamingBoth() {
        offline().withBean(TwoForOne.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(StaggerKafkaConsumersTest.root(context.getStartupFailure()))
                    .hasMessageStartingWith("two @StaggerKafkaListener methods for consumer 'orders': ")
                    .hasMessageContaining(TwoForOne.class.getName() + ".first")
                    .hasMessageContaining(TwoForOne.class.getName() + ".second");
        });
    }

    @Test
    void aListenerMethodAndAHandlerPropertyForOneConsumerFailStartupNamingTheProperty() {
        offline().withBean(OneForOrders.class).withBean("shipping", KafkaHandler.class, () -> m -> { })
                .withPropertyValues("stagger.kafka.consumers.orders.handler=shipping").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(StaggerKafkaConsumersTest.root(context.getStartupFailure()))
                            .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                            .hasMessageContaining("stagger.kafka.consumers.orders.handler")
                            .hasMessageContaining(OneForOrders.class.getName() + ".on");
                });
    }

    @Test
    void aListenerMethodAndAHandlerBeanNamedLikeTheConsumerFailStartup() {
        offline().withBean(OneForOrders.class).withBean("orders", KafkaHandler.class, () -> m -> { }).run(context -> {
            assertThat(context).hasFailed();
            assertThat(StaggerKafkaConsumersTest.root(context.getStartupFailure()))
                    .hasMessageStartingWith("two handlers for consumer 'orders': the KafkaHandler bean 'orders' and the")
                    .hasMessageContaining(OneForOrders.class.getName() + ".on");
        });
    }

    @Test
    void aListenerNamingNoConsumerFailsStartup() {
        offline().withBean(NoConsumer.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(StaggerKafkaConsumersTest.root(context.getStartupFailure()))
                    .hasMessageEndingWith("names no consumer: set consumer or topic");
        });
    }
}
