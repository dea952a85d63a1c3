package dev.stagger.rabbitmq.internal;

import dev.stagger.RetryListener;
import dev.stagger.rabbitmq.Message;
import dev.stagger.rabbitmq.MessageListener;
import java.util.ArrayList;
import java.util.List;

/** What the listeners open around one run of the handler ({@link MessageListener#onHandling}). */
final class HandlingScopes {
    private HandlingScopes() {
    }

    /** Asks every listener; returns null, one scope, or a list of them (most listeners open none). */
    static Object open(MessageListener[] listeners, Message message) {
        Object opened = null;
        for (MessageListener l : listeners) {
            RetryListener.Scope s;
            try {
                s = l.onHandling(message);
            } catch (RuntimeException ignored) {
                continue; // listeners must not change what becomes of the message
            }
            if (s == null) {
                continue;
            }
            if (opened == null) {
                opened = s;
            } else {
                @SuppressWarnings("unchecked") // only this method makes the list
                List<RetryListener.Scope> all = opened instanceof List<?> ? (List<RetryListener.Scope>) opened : new ArrayList<>(List.of((RetryListener.Scope) opened));
                all.add(s);
                opened = all;
            }
        }
        return opened;
    }

    /** Closes what {@link #open} returned, the last opened first. */
    static void close(Object opened) {
        if (opened instanceof RetryListener.Scope s) {
            closeQuietly(s);
        } else if (opened instanceof List<?> all) {
            for (int i = all.size() - 1; i >= 0; i--) {
                closeQuietly((RetryListener.Scope) all.get(i));
            }
        }
    }

    private static void closeQuietly(RetryListener.Scope scope) {
        try {
            scope.close();
        } catch (RuntimeException ignored) {
            // listeners must not change what becomes of the message
        }
    }
}
