package dev.stagger.spring.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** An account row, in the run's own schema ({@code hibernate.default_schema}). */
@Entity
@Table(name = "accounts")
public class Account {
    @Id
    private String id;
    private int balance;

    protected Account() {
    }

    public String getId() {
        return id;
    }

    public int getBalance() {
        return balance;
    }

    public void add(int amount) {
        balance += amount;
    }
}
