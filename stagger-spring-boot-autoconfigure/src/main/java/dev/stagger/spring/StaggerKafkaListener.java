package dev.stagger.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a bean's method the handler of one of Stagger's Kafka consumers, as Spring Kafka's
 * {@code @KafkaListener} makes it a listener: a {@code @KafkaListener} method moves over by
 * swapping the annotation. The method takes one parameter: the record's value ({@code byte[]}, or
 * {@code String} decoded as UTF-8), the {@code ConsumerRecord} (key and value {@code byte[]} or
 * {@code String}; its topic the work topic, its partition and offset where this attempt was
 * consumed, no timestamp), or the {@code KafkaMessage} (attempt, history, the inbox's id); it
 * returns {@code void}. Returning settles the record; throwing fails the attempt, which the
 * consumer's policy retries through a delay topic or dead-letters.
 *
 * <p>The consumer is the entry {@link #consumer()} of {@code stagger.kafka.consumers} (its retry,
 * delay levels, concurrency, key order), or, without such an entry, one with the defaults. Its
 * work topic and group are the consumer's name unless the entry's {@code topic} / {@code group}
 * or {@link #topic()} say otherwise. Both attributes take {@code ${...}} placeholders. The
 * method's bean must be a singleton created at startup (not lazy). Startup fails, naming the
 * method, for a signature other than the above, for two methods of one consumer, and for a
 * consumer that has a {@code KafkaHandler} bean too (its {@code handler} property, or a bean
 * named like it).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface StaggerKafkaListener {
    /** The consumer's name: its {@code stagger.kafka.consumers} entry; default {@link #topic()}. */
    String consumer() default "";

    /** The work topic; default the consumer's {@code topic} property, or its name. */
    String topic() default "";
}
