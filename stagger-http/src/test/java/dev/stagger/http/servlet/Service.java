package dev.stagger.http.servlet;

import dev.stagger.testsupport.http.JettyStop;
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

/**
 * One service on 127.0.0.1 (ephemeral port): a Jetty servlet container running one handler for
 * every path, behind the given filters (registered for the request, async and error dispatches).
 */
final class Service implements AutoCloseable {

    /** What the service does with a request. */
    @FunctionalInterface
    interface Handler {
        void handle(HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException;
    }

    private final Server server = new Server();
    private final ServerConnector connector = new ServerConnector(server);

    Service(Handler handler, Filter... filters) throws Exception {
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        for (Filter f : filters) {
            FilterHolder holder = new FilterHolder(f);
            holder.setAsyncSupported(true);
            context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC, DispatcherType.ERROR));
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
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
    }

    @Override
    public void close() throws Exception {
        JettyStop.stop(server);
    }
}
