package dev.stagger.httpclient5.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.async.AsyncExecChainHandler;
import org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder;
import org.apache.hc.core5.concurrent.Cancellable;
import org.apache.hc.core5.concurrent.CancellableDependency;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.jspecify.annotations.Nullable;

/**
 * Makes cancelling an async exchange's future cancel the exchange, whenever the cancel comes. The
 * async client's future holds one dependency, the cancellable of the stage running (the lease,
 * the connect, the exchange), each stage replacing the one before, set from more than one thread:
 * a stage's set that comes late (the connect's, once the connection it opened runs the exchange)
 * can replace the exchange's, and a cancel then cancels the finished connect and leaves the
 * request running, its connection leased until the server answers. A losing hedge is cancelled
 * exactly then, right after the winner's answer.
 *
 * <p>{@link #install} adds a handler first in the exec chain that gives every later stage a
 * dependency of its own ({@link Stages}): it keeps every stage's cancellable and stands as the
 * future's one dependency, so a cancel of the future cancels them all (a finished stage's cancel
 * does nothing), and a stage that starts after the cancel is cancelled as it is set.
 */
public final class ExchangeCancellation {
    private ExchangeCancellation() {
    }

    /** Adds the handler, first in the exec chain. */
    public static HttpAsyncClientBuilder install(HttpAsyncClientBuilder builder) {
        return builder.addExecInterceptorFirst("stagger-cancellation", new Hook());
    }

    private static final class Hook implements AsyncExecChainHandler {
        @Override
        public void execute(HttpRequest request, @Nullable AsyncEntityProducer entityProducer, AsyncExecChain.Scope scope,
                            AsyncExecChain chain, AsyncExecCallback callback) throws HttpException, IOException {
            chain.proceed(request, entityProducer, new AsyncExecChain.Scope(scope.exchangeId, scope.route,
                    scope.originalRequest, new Stages(scope.cancellableDependency), scope.clientContext, scope.execRuntime,
                    scope.scheduler, scope.execCount), callback);
        }
    }

    /** Every stage's cancellable of one exchange, standing as the client future's one dependency. */
    private static final class Stages implements CancellableDependency {
        private final CancellableDependency future;
        /** Null once cancelled. Guarded by {@code this}. */
        private @Nullable List<Cancellable> stages = new ArrayList<>(4);

        Stages(CancellableDependency future) {
            this.future = future;
        }

        @Override
        public void setDependency(Cancellable stage) {
            boolean cancelled;
            synchronized (this) {
                List<Cancellable> s = stages;
                cancelled = s == null;
                if (s != null) {
                    s.add(stage);
                }
            }
            if (cancelled) {
                stage.cancel();
            } else {
                future.setDependency(this); // again at each stage, whoever set the future's since; cancels this if it is done
            }
        }

        @Override
        public boolean isCancelled() {
            return future.isCancelled();
        }

        @Override
        public boolean cancel() {
            List<Cancellable> s;
            synchronized (this) {
                s = stages;
                stages = null;
            }
            if (s == null) {
                return false;
            }
            for (Cancellable stage : s) {
                stage.cancel(); // a finished stage's cancel does nothing
            }
            return true;
        }
    }
}
