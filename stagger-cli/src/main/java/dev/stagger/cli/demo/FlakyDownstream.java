package dev.stagger.cli.demo;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The scripted downstream every panel calls over real HTTP on loopback: each run id has a queue of
 * planned answers (status, Retry-After, slowness); when a run's script is used up it answers 200.
 */
final class FlakyDownstream extends HttpServlet {
    private static final long serialVersionUID = 1L;

    /** One planned answer. */
    record Step(int status, int retryAfterSeconds, int delayMs) {
    }

    private final Map<String, Deque<Step>> scripts = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong requests = new AtomicLong();

    /** Registers a script and returns its run id. */
    String plan(List<Step> steps) {
        String id = "run-" + ids.incrementAndGet();
        scripts.put(id, new ArrayDeque<>(steps));
        return id;
    }

    void forget(String run) {
        scripts.remove(run);
    }

    long requests() {
        return requests.get();
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        requests.incrementAndGet();
        String run = req.getParameter("run");
        Deque<Step> script = run == null ? null : scripts.get(run);
        Step step = null;
        if (script != null) {
            synchronized (script) { // ArrayDeque guard; nothing blocking inside
                step = script.pollFirst();
            }
        }
        if (step == null) {
            step = new Step(200, 0, 0);
        }
        if (step.delayMs() > 0) {
            try {
                Thread.sleep(step.delayMs());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        resp.setStatus(step.status());
        if (step.retryAfterSeconds() > 0) {
            resp.setHeader("Retry-After", Integer.toString(step.retryAfterSeconds()));
        }
        resp.setContentType("application/json");
        resp.getWriter().write("{\"status\":" + step.status() + "}");
    }
}
