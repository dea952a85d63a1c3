package dev.stagger.httpclient5.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.async.AsyncExecChainHandler;
import org.apache.hc.client5.http.impl.ChainElement;
import org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.concurrent.Cancellable;
import org.apache.hc.core5.concurrent.CancellableDependency;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.jspecify.annotations.Nullable;

/**
 * Cancels one async exchange whenever the cancel comes, also when the client's own future misses
 * it. The async client chains each stage's cancellable into the returned future one after another,
 * from more than one thread: a stage set late (the connection's, once it is open) can replace the
 * exchange's, and a cancel in that window leaves the request running, its connection leased until
 * the server answers. A losing hedge is cancelled exactly then, right after the winner's answer.
 *
 * <p>{@link #install} puts a handler just before the main transport: it takes the exchange's own
 * cancellable (hard cancellation, the client's default) for the request whose context carries an
 * {@code ExchangeCancellation}, and {@link #cancel} cancels it, once, before or after it exists.
 * An exchange cancelled before it reaches the transport fails there without being sent.
 */
public final class ExchangeCancellation {
    private static final String ATTRIBUTE = ExchangeCancellation.class.getName();
    private static final Object CANCELLED = new Object();

    /** Null, the running exchange's {@link Cancellable}, or {@link #CANCELLED}. */
    private final AtomicReference<@Nullable Object> state = new AtomicReference<>();

    /** Adds the handler that hands each exchange's cancellable to its {@code ExchangeCancellation}. */
    public static HttpAsyncClientBuilder install(HttpAsyncClientBuilder builder) {
        return builder.addExecInterceptorBefore(ChainElement.MAIN_TRANSPORT.name(), "stagger-cancellation", new Hook());
    }

    /** A context for one exchange, carrying this cancellation to the handler. */
    public HttpClientContext context() {
        HttpClientContext context = HttpClientContext.create();
        context.setAttribute(ATTRIBUTE, this);
        return context;
    }

    /** Cancels the exchange: now if it runs, as it reaches the transport if it does not yet. */
    public void cancel() {
        Object previous = state.getAndSet(CANCELLED);
        if (previous instanceof Cancellable exchange) {
            exchange.cancel();
        }
    }

    public boolean isCancelled() {
        return state.get() == CANCELLED;
    }

    /** The exchange's cancellable, as the transport hands it over; cancelled at once if {@link #cancel} came first. */
    void attach(Cancellable exchange) {
        Object current = state.get();
        while (current != CANCELLED) {
            if (state.compareAndSet(current, exchange)) {
                return;
            }
            current = state.get();
        }
        exchange.cancel();
    }

    private static final class Hook implements AsyncExecChainHandler {
        @Override
        public void execute(HttpRequest request, @Nullable AsyncEntityProducer entityProducer, AsyncExecChain.Scope scope,
                            AsyncExecChain chain, AsyncExecCallback callback) throws HttpException, IOException {
            Object attribute = scope.clientContext.getAttribute(ATTRIBUTE);
            if (!(attribute instanceof ExchangeCancellation cancellation)) {
                chain.proceed(request, entityProducer, scope, callback);
                return;
            }
            if (cancellation.isCancelled()) {
                callback.failed(new InterruptedIOException("exchange cancelled before it was sent"));
                return;
            }
            AsyncExecChain.Scope watched = new AsyncExecChain.Scope(scope.exchangeId, scope.route, scope.originalRequest,
                    new Watched(scope.cancellableDependency, cancellation), scope.clientContext, scope.execRuntime,
                    scope.scheduler, scope.execCount);
            chain.proceed(request, entityProducer, watched, callback);
        }
    }

    /** A stage's cancellable, cancelled at most once whoever asks first. */
    private static final class Once extends AtomicReference<@Nullable Cancellable> implements Cancellable {
        private static final long serialVersionUID = 1L;

        Once(Cancellable stage) {
            super(stage);
        }

        @Override
        public boolean cancel() {
            Cancellable stage = getAndSet(null);
            return stage != null && stage.cancel();
        }
    }

    /** The client's own dependency, every cancellable set on it also handed to the cancellation. */
    private static final class Watched implements CancellableDependency {
        private final CancellableDependency delegate;
        private final ExchangeCancellation cancellation;

        Watched(CancellableDependency delegate, ExchangeCancellation cancellation) {
            this.delegate = delegate;
            this.cancellation = cancellation;
        }

        /** Both the client's future and the cancellation get one cancellable that cancels the stage once. */
        @Override
        public void setDependency(Cancellable dependency) {
            Cancellable once = new Once(dependency);
            delegate.setDependency(once);
            cancellation.attach(once);
        }

        @Override
        public boolean isCancelled() {
            return delegate.isCancelled();
        }

        @Override
        public boolean cancel() {
            return delegate.cancel();
        }
    }
}
