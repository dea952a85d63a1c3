package dev.stagger.spring;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code stagger.events.*}: what {@code /actuator/staggerevents} keeps. */
@ConfigurationProperties("stagger.events")
public class StaggerEventsProperties {
    /** Events kept per retry or breaker name, the oldest dropped first (default 100). */
    private int size = 100;

    public int getSize() { return size; }
    public void setSize(int size) { this.size = size; }
}
