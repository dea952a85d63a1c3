package dev.stagger.cli.demo;

import dev.stagger.idempotency.IdempotencyStore;
import dev.stagger.idempotency.servlet.IdempotencyFilter;
import dev.stagger.idempotency.servlet.KeyPolicy;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;

/**
 * Panel 4, the server side: a shop whose card-charging endpoint sits behind Stagger's
 * {@link IdempotencyFilter}, and a fault that cuts the connection after the shop has answered the
 * first attempt of each payment (the response is lost on its way back).
 */
final class PaymentShop {
    /** Charges per payment: each experiment on the page is its own payment and shows only its own. */
    private final Map<String, AtomicLong> chargesByPayment = new ConcurrentHashMap<>();
    private final Set<String> lostOnce = ConcurrentHashMap.newKeySet();

    /** How many times {@code payment} was charged. */
    long charges(String payment) {
        AtomicLong n = chargesByPayment.get(payment);
        return n == null ? 0 : n.get();
    }

    /** The idempotency filter as a shop would configure it: keys honoured on POST, scope per customer. */
    static IdempotencyFilter idempotencyFilter(IdempotencyStore store) {
        return IdempotencyFilter.builder(store)
                .keyRequirement((method, route) -> "POST".equals(method) ? KeyPolicy.OPTIONAL : KeyPolicy.IGNORED)
                .scopeResolver(request -> Optional.of("customer-" + Optional.ofNullable(request.getHeader("X-Customer")).orElse("demo")))
                .build();
    }

    /** The shop's card-charging endpoint. */
    HttpServlet chargeServlet() {
        return new HttpServlet() {
            private static final long serialVersionUID = 1L;

            @Override
            protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                if (req.getPathInfo() != null && req.getPathInfo().endsWith("/bad")) {
                    resp.setStatus(400);
                    resp.setContentType("application/json");
                    resp.getWriter().write("{\"error\":\"card number missing\"}");
                    return;
                }
                String payment = String.valueOf(req.getParameter("payment"));
                long times = chargesByPayment.computeIfAbsent(payment, p -> new AtomicLong()).incrementAndGet();
                resp.setStatus(201);
                resp.setContentType("application/json");
                resp.getWriter().write("{\"payment\":\"" + payment.replaceAll("[^A-Za-z0-9-]", "") + "\",\"charges\":" + times + "}");
            }
        };
    }

    /** Cuts the connection after the shop has answered the first attempt of each payment. */
    Filter loseFirstResponse() {
        return new Filter() {
            @Override
            public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
                String payment = req.getParameter("payment");
                if (payment != null && lostOnce.add(payment)) {
                    chain.doFilter(req, new Blackhole((HttpServletResponse) res));
                    ServletContextRequest.getServletContextRequest(req).getConnectionMetaData().getConnection()
                            .getEndPoint().close();
                    return;
                }
                chain.doFilter(req, res);
            }
        };
    }

    /** Swallows the body so nothing reaches the client before the connection is cut. */
    private static final class Blackhole extends HttpServletResponseWrapper {
        private final ServletOutputStream nowhere = new ServletOutputStream() {
            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener listener) {
                // writes complete at once
            }

            @Override
            public void write(int b) {
                // dropped
            }
        };

        Blackhole(HttpServletResponse response) {
            super(response);
        }

        @Override
        public ServletOutputStream getOutputStream() {
            return nowhere;
        }

        @Override
        public PrintWriter getWriter() {
            return new PrintWriter(OutputStream.nullOutputStream());
        }
    }
}
