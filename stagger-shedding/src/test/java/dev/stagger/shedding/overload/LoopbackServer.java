package dev.stagger.shedding.overload;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A real Jetty on 127.0.0.1, port 0: the given filters, in order, in front of one handler for
 * every path, async supported throughout. Stopping does not wait for requests in progress: their
 * threads are interrupted after a second.
 */
public final class LoopbackServer implements AutoCloseable {

    /** The application behind the filters. */
    @FunctionalInterface
    public interface Handler {
        void handle(HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException;
    }

    private final Server server;
    private final URI base;

    private LoopbackServer(Server server, URI base) {
        this.server = server;
        this.base = base;
    }

    public static LoopbackServer start(Handler handler, Filter... filters) throws Exception {
        return start(256, handler, filters);
    }

    public static LoopbackServer start(int threads, Handler handler, Filter... filters) throws Exception {
        QueuedThreadPool pool = new QueuedThreadPool(threads, 8);
        pool.setName("loopback-server");
        pool.setStopTimeout(1_000);
        Server server = new Server(pool);
        server.setStopTimeout(0); // no graceful drain: queued work is abandoned, blocked handlers interrupted
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        connector.setAcceptQueueSize(1024);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        for (Filter f : filters) {
            FilterHolder holder = new FilterHolder(f);
            holder.setAsyncSupported(true);
            context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
        }
        ServletHolder servlet = new ServletHolder(new HttpServlet() {
            private static final long serialVersionUID = 1L;

            @Override
            protected void service(HttpServletRequest req, HttpServletResponse res) throws ServletException, IOException {
                handler.handle(req, res);
            }
        });
        servlet.setAsyncSupported(true);
        context.addServlet(servlet, "/*");
        server.setHandler(context);
        server.start();
        return new LoopbackServer(server, URI.create("http://127.0.0.1:" + connector.getLocalPort()));
    }

    public URI uri(String path) {
        return base.resolve(path);
    }

    /** Stops Jetty; a failure to stop is unchecked (there is nothing a caller could do about it). */
    @Override
    public void close() {
        try {
            server.stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            throw new IllegalStateException("Jetty did not stop", e);
        }
    }
}
