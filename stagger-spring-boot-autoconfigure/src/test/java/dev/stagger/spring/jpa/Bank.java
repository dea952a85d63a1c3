package dev.stagger.spring.jpa;

import dev.stagger.spring.StaggerRetry;
import jakarta.persistence.EntityManager;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.transaction.annotation.Transactional;

/** A transfer through a Spring Data repository, retried by {@code @StaggerRetry} around {@code @Transactional}. */
public class Bank {
    /** PostgreSQL's deadlock error, raised on purpose: Hibernate sees the SQLException a real deadlock gives. */
    static final String DEADLOCK = "DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$";

    private final AtomicInteger attempts = new AtomicInteger();
    private final AccountRepository accounts;
    private final EntityManager entityManager;

    public Bank(AccountRepository accounts, EntityManager entityManager) {
        this.accounts = accounts;
        this.entityManager = entityManager;
    }

    public int attempts() {
        return attempts.get();
    }

    /** Debits (flushed: the UPDATE is in the database), then the first attempt dies in a deadlock before the credit. */
    @StaggerRetry("transfers")
    @Transactional
    public void transferHittingOneDeadlock(int amount) {
        Account alice = accounts.findById("alice").orElseThrow();
        alice.add(-amount);
        accounts.saveAndFlush(alice);
        if (attempts.incrementAndGet() == 1) {
            entityManager.createNativeQuery(DEADLOCK).executeUpdate();
        }
        accounts.findById("bob").orElseThrow().add(amount);
    }
}
