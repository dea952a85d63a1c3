package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import dev.stagger.CircuitBreaker;
import dev.stagger.RetryBudget;
import dev.stagger.observability.RetryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import jakarta.servlet.DispatcherType;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.jspecify.annotations.Nullable;

/**
 * The demo web server: the page, its JSON API under {@code /api/}, the scripted flaky downstream
 * under {@code /downstream/}, and Prometheus metrics at {@code /metrics}. Everything is served
 * from this process (no CDN), so it works offline.
 */
@SuppressWarnings("try") // close() rethrows the first failure of what it closes: Jetty's stop() declares Exception
public final class DemoServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, String> TYPES = Map.of(
            "html", "text/html; charset=utf-8", "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8", "svg", "image/svg+xml", "png", "image/png");
    /** Browsers ask for /favicon.ico whatever the page links: it gets the page's SVG icon. */
    private static final Map<String, String> ALIASES = Map.of("/", "/index.html", "/favicon.ico", "/favicon.svg");

    private final Server server;
    private final ServerConnector connector;
    private final Map<String, DemoRoute> routes = new LinkedHashMap<>();
    private final JdbcIdempotencyStore idempotencyStore;
    private final JobsLab jobsLab;
    private volatile @Nullable StoreLab storeLab;
    private final HerdRoute herd = new HerdRoute();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    private DemoServer(String host, int port, Path dataDir) throws Exception {
        server = new Server();
        connector = new ServerConnector(server);
        connector.setHost(host);
        connector.setPort(port);
        server.addConnector(connector);
        idempotencyStore = JdbcIdempotencyStore.sqlite(dataDir.resolve("idempotency.db"));
        JobsLab jobs = null;
        try {
            jobs = new JobsLab(dataDir);
            start(jobs, dataDir);
        } catch (Exception | Error e) {
            // nothing half-started may outlive a failed start: Jetty's threads would keep the JVM alive
            herd.close();
            if (storeLab != null) {
                storeLab.close();
            }
            closeAll(server, jobs, idempotencyStore, e);
            throw e;
        }
        jobsLab = jobs;
    }

    private void start(JobsLab jobs, Path dataDir) throws Exception {
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        FlakyDownstream downstream = new FlakyDownstream();
        context.addServlet(new ServletHolder(downstream), "/downstream/*");
        context.addServlet(new ServletHolder(new ApiServlet()), "/api/*");
        PaymentShop shop = new PaymentShop();
        context.addServlet(new ServletHolder(shop.chargeServlet()), "/shop/*");
        // the fault sits outside the idempotency filter: the answer is stored, then lost on the wire
        context.addFilter(new FilterHolder(shop.loseFirstResponse()), "/shop/*", EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(new FilterHolder(PaymentShop.idempotencyFilter(idempotencyStore)), "/shop/*",
                EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new MetricsServlet()), "/metrics");
        StoreLab store = new StoreLab(dataDir, HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build(),
                RetryMetrics.of(registry));
        storeLab = store;
        context.addServlet(new ServletHolder(store.servlet()), "/store/*");
        context.addServlet(new ServletHolder(new AssetServlet()), "/");
        server.setHandler(context);
        server.start();

        URI base = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        routes.put("send", new SendRoute(downstream, base.resolve("downstream/flaky"), http));
        routes.put("calculator", new CalculatorRoute());
        routes.put("herd", herd::start);
        routes.put("herd-progress", herd::progress);
        routes.put("metastable", new MetastableRoute()::run);
        routes.put("layers", new LayersRoute()::run);
        routes.put("tail", new TailRoute()::run);
        PaymentLab payments = new PaymentLab(shop, base.resolve("shop/"), http);
        routes.put("pay", payments::pay);
        routes.put("bad-request", payments::badRequest);
        routes.put("jobs", jobs::list);
        routes.put("jobs-enqueue", jobs::enqueue);
        routes.put("jobs-redrive", jobs::redrive);

        CircuitBreaker breaker = BreakerLab.newBreaker();
        RetryBudget budget = BreakerLab.newBudget();
        RetryMetrics metrics = RetryMetrics.of(registry);
        BreakerLab lab = new BreakerLab(downstream, base.resolve("downstream/flaky"), http, registry, metrics, breaker, budget);
        routes.put("hammer", lab::hammer);
        routes.put("budget", lab::drainBudget);
        routes.put("heal", lab::heal);
        routes.put("state", request -> lab.state());

        store.connect(base.resolve("store/"));
        routes.put("store-down", store::setDown);
        routes.put("store-prices", store::prices);
        routes.put("store-order", store::order);
        routes.put("store-account", store::account);
        routes.put("store-orders", store::list);
    }

    /** Starts the demo on {@code host:port} (port 0 picks a free one), keeping its files in {@code dataDir}. */
    public static DemoServer start(String host, int port, Path dataDir) throws Exception {
        return new DemoServer(host, port, dataDir);
    }

    public int port() {
        return connector.getLocalPort();
    }

    public void join() throws InterruptedException {
        server.join();
    }

    /** Stops the server, the job workers and the stores; each is closed even when an earlier one fails. */
    @Override
    public void close() throws Exception {
        herd.close();
        Exception failed = closeAll(server, jobsLab, idempotencyStore, null);
        if (storeLab != null) {
            storeLab.close();
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** Closes what is there in order, keeping the first failure (added to {@code first} when given). */
    private static <T extends Throwable> @Nullable Exception closeAll(Server server, @Nullable JobsLab jobs,
                                                                      JdbcIdempotencyStore store, @Nullable T first) {
        Exception failed = null;
        for (AutoCloseable c : new AutoCloseable[] {server::stop, jobs, store}) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception e) {
                if (first != null) {
                    first.addSuppressed(e);
                } else if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        return failed;
    }

    private final class ApiServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String name = req.getPathInfo() == null ? "" : req.getPathInfo().substring(1);
            DemoRoute route = routes.get(name);
            resp.setContentType("application/json");
            resp.setHeader("Cache-Control", "no-store");
            if (route == null) {
                resp.setStatus(404);
                JSON.writeValue(resp.getOutputStream(), Map.of("error", "no such endpoint: /api/" + name));
                return;
            }
            JsonNode body;
            try {
                body = "POST".equals(req.getMethod()) && req.getContentLength() != 0
                        ? JSON.readTree(req.getInputStream()) : JSON.createObjectNode();
                if (body == null || body.isMissingNode()) {
                    body = JSON.createObjectNode();
                }
                if (!body.isObject()) {
                    resp.setStatus(400);
                    JSON.writeValue(resp.getOutputStream(), Map.of("error", "request body must be a JSON object, got " + body));
                    return;
                }
                if (body instanceof ObjectNode object) {
                    req.getParameterMap().forEach((k, v) -> {
                        if (!object.has(k) && v.length > 0) {
                            object.put(k, v[0]);
                        }
                    });
                }
            } catch (IOException badJson) {
                resp.setStatus(400);
                JSON.writeValue(resp.getOutputStream(), Map.of("error", "request body is not JSON: " + badJson.getMessage()));
                return;
            }
            try {
                Object answer = route.handle(body);
                JSON.writeValue(resp.getOutputStream(), answer);
            } catch (IllegalArgumentException bad) {
                resp.setStatus(400);
                JSON.writeValue(resp.getOutputStream(), Map.of("error", bad.getMessage()));
            } catch (Exception failed) {
                resp.setStatus(500);
                JSON.writeValue(resp.getOutputStream(), Map.of("error", failed.toString()));
            }
        }
    }

    private final class MetricsServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain; version=0.0.4; charset=utf-8");
            resp.getWriter().write(registry.scrape());
        }
    }

    /** Serves the page's files from the classpath folder {@code /demo}. */
    private static final class AssetServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String path = req.getRequestURI().isEmpty() ? "/" : req.getRequestURI();
            path = ALIASES.getOrDefault(path, path);
            if (path.contains("..") || !path.matches("/[A-Za-z0-9._/-]+")) {
                resp.sendError(404);
                return;
            }
            try (InputStream in = DemoServer.class.getResourceAsStream("/demo" + path)) {
                if (in == null) {
                    resp.sendError(404);
                    return;
                }
                String ext = path.substring(path.lastIndexOf('.') + 1);
                resp.setContentType(TYPES.getOrDefault(ext, "application/octet-stream"));
                in.transferTo(resp.getOutputStream());
            }
        }
    }
}
