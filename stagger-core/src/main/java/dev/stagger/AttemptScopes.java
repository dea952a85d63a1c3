package dev.stagger;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * What a call's listeners open around each attempt ({@link RetryListener#onAttemptStarting}) and
 * the per-call listeners ({@link RetryListener#forCall}): nothing is allocated unless a listener
 * answers with a scope or a per-call object. A listener that throws is skipped: listeners must not
 * change the call's outcome.
 */
final class AttemptScopes {
    private AttemptScopes() {
    }

    /**
     * The listeners that hear one call of {@code retry}: the retry's own array (nothing allocated)
     * unless a listener answers {@link RetryListener#forCall} with another object. Called once as
     * the call begins, on the caller's thread.
     */
    static RetryListener[] forCall(Retry retry) {
        RetryListener[] own = retry.listeners;
        RetryListener[] mine = own;
        for (int i = 0; i < own.length; i++) {
            RetryListener l;
            try {
                l = own[i].forCall(retry);
            } catch (RuntimeException ignored) {
                continue; // keep the retry's listener
            }
            if (l != null && l != own[i]) {
                if (mine == own) {
                    mine = own.clone();
                }
                mine[i] = l;
            }
        }
        return mine;
    }

    /**
     * Tells {@code listeners} attempt {@code number} of the retry {@code name} is about to run;
     * returns what they opened around it, for {@link #close}: null, one scope, or an array of them.
     */
    static @Nullable Object open(String name, RetryListener[] listeners, int number) {
        @Nullable Object opened = null;
        for (RetryListener l : listeners) {
            RetryListener.Scope s;
            try {
                s = l.onAttemptStarting(name, number);
            } catch (RuntimeException ignored) {
                continue;
            }
            if (s == null) {
                continue;
            }
            if (opened == null) {
                opened = s;
            } else if (opened instanceof RetryListener.Scope) {
                opened = new RetryListener.Scope[] {(RetryListener.Scope) opened, s};
            } else {
                RetryListener.Scope[] all = (RetryListener.Scope[]) opened;
                all = Arrays.copyOf(all, all.length + 1);
                all[all.length - 1] = s;
                opened = all;
            }
        }
        return opened;
    }

    /** Closes what {@link #open} opened, the last opened first. */
    static void close(@Nullable Object opened) {
        if (opened == null) {
            return;
        }
        if (opened instanceof RetryListener.Scope) {
            closeQuietly((RetryListener.Scope) opened);
            return;
        }
        RetryListener.Scope[] all = (RetryListener.Scope[]) opened;
        for (int i = all.length - 1; i >= 0; i--) {
            closeQuietly(all[i]);
        }
    }

    private static void closeQuietly(RetryListener.Scope scope) {
        try {
            scope.close();
        } catch (RuntimeException ignored) {
            // listeners must not change the call's outcome
        }
    }
}
