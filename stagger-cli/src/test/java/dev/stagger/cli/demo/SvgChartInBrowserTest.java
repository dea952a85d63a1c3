package dev.stagger.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.sim.ContentionConfig;
import dev.stagger.sim.OutageConfig;
import dev.stagger.sim.Simulation;
import dev.stagger.sim.SimulationResult;
import dev.stagger.sim.SvgChart;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.chrome.ChromeDriver;

/** The charts {@code stagger simulate --svg} writes, measured as Chromium lays them out. */
class SvgChartInBrowserTest {
    /** Every text whose box, as laid out, leaves the chart: "text [left, right] of width". */
    private static final String TEXT_OUTSIDE = """
            const svg = document.documentElement, r = svg.getBoundingClientRect();
            return [...document.querySelectorAll('text')].map(t => [t, t.getBoundingClientRect()])
              .filter(([t, b]) => b.left < r.left - 0.5 || b.top < r.top - 0.5 || b.right > r.right + 0.5 || b.bottom > r.bottom + 0.5)
              .map(([t, b]) => t.textContent + ' [' + Math.round(b.left) + ', ' + Math.round(b.right) + '] of ' + Math.round(r.width));
            """;

    @TempDir
    static Path dir;
    static ChromeDriver browser;

    @BeforeAll
    static void start() throws Exception {
        browser = Browser.start();
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.quit();
        }
    }

    @Test
    void theOutageChartsLegendWithEveryGuardFitsInTheChart() throws Exception {
        List<SimulationResult> results = Simulation.outage(OutageConfig.defaults().withClients(20).withRuns(1)
                .withBudget(true).withCircuitBreaker(true));
        assertThat(textOutside(SvgChart.render("Load during an outage", results))).isEmpty();
    }

    @Test
    void theContentionChartsTextFitsInTheChart() throws Exception {
        List<SimulationResult> results = Simulation.contention(ContentionConfig.defaults().withClients(10).withRuns(1)
                .withBudget(true));
        assertThat(textOutside(SvgChart.render("Contention", results))).isEmpty();
    }

    private static List<?> textOutside(String svg) throws Exception {
        Path file = Files.writeString(Files.createTempFile(dir, "chart", ".svg"), svg);
        browser.get(file.toUri().toString());
        return (List<?>) browser.executeScript(TEXT_OUTSIDE);
    }
}
