package dev.stagger.idempotency.support;

import dev.stagger.testsupport.http.JettyStop;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.security.Principal;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A real Jetty on 127.0.0.1, port 0. Filters run in the given order, after a stand-in for an
 * authentication filter: a request carrying {@code X-Test-User} is authenticated as that user.
 */
public final class TestServer implements AutoCloseable {
    public static final String USER_HEADER = "X-Test-User";

    /** The application under the filter. */
    @FunctionalInterface
    public interface Handler {
        void handle(HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException;
    }

    private final Server server;
    private final URI base;

    private TestServer(Server server, URI base) {
        this.server = server;
        this.base = base;
    }

    public static TestServer start(Handler handler, Filter... filters) throws Exception {
        Server server = new Server();
        HttpConfiguration http = new HttpConfiguration();
        http.setRequestHeaderSize(32 * 1024); // let 10 KB hostile keys reach the filter instead of Jetty's 431
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addFilter(new FilterHolder(new TestAuthentication()), "/*", EnumSet.of(DispatcherType.REQUEST));
        for (Filter f : filters) {
            context.addFilter(new FilterHolder(f), "/*", EnumSet.of(DispatcherType.REQUEST));
        }
        context.addServlet(new ServletHolder(new HttpServlet() {
            private static final long serialVersionUID = 1L;

            @Override
            protected void service(HttpServletRequest req, HttpServletResponse res) throws ServletException, IOException {
                handler.handle(req, res);
            }
        }), "/*");
        server.setHandler(context);
        server.start();
        return new TestServer(server, URI.create("http://127.0.0.1:" + connector.getLocalPort()));
    }

    public URI uri(String path) {
        return base.resolve(path);
    }

    @Override
    public void close() throws Exception {
        JettyStop.stop(server);
    }

    private static final class TestAuthentication implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
            HttpServletRequest request = (HttpServletRequest) req;
            String user = request.getHeader(USER_HEADER);
            if (user == null) {
                chain.doFilter(req, res);
                return;
            }
            Principal principal = () -> user;
            chain.doFilter(new HttpServletRequestWrapper(request) {
                @Override
                public Principal getUserPrincipal() {
                    return principal;
                }
            }, res);
        }
    }
}
