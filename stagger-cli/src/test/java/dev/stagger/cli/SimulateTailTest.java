package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/** {@code stagger simulate --scenario tail}: the table, the JSON, the chart and the options. */
class SimulateTailTest {

    @Test
    void theTableComparesEverySetUpAtBothLoads() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "tail", "--no-progress");

        assertThat(o.exitCode()).isZero();
        assertThat(o.out()).contains("scenario tail: 20 workers, 10 ms requests, 2 % of them 20x slower")
                .contains("at 50 % (normal) and 95 % (overload) of capacity");
        for (String setup : new String[] {"none", "fixed", "fixed+budget", "percentile", "percentile+budget"}) {
            assertThat(o.out().lines().filter(l -> l.matches("^" + java.util.regex.Pattern.quote(setup) + " +normal .*")))
                    .as(setup + " normal").hasSize(1);
            assertThat(o.out().lines().filter(l -> l.matches("^" + java.util.regex.Pattern.quote(setup) + " +overload .*")))
                    .as(setup + " overload").hasSize(1);
        }
        String none = o.out().lines().filter(l -> l.startsWith("none ")).findFirst().orElseThrow();
        assertThat(none).contains(" 0.0%");
    }

    @Test
    void jsonAndTheChartFollowTheOptions(@TempDir Path dir) throws Exception {
        Path chart = dir.resolve("tail.svg");
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "tail", "--tail-share", "0.05",
                "--tail-factor", "10", "--setups", "none,percentile", "--seed", "7", "--json", "--svg", chart.toString());

        assertThat(o.exitCode()).isZero();
        assertThat(o.err()).contains("wrote " + chart);
        JsonNode root = new ObjectMapper().readTree(o.out());
        assertThat(root.get("scenario").asText()).isEqualTo("tail");
        assertThat(root.get("seed").asLong()).isEqualTo(7);
        assertThat(root.get("tailShare").asDouble()).isEqualTo(0.05);
        assertThat(root.get("tailFactor").asDouble()).isEqualTo(10);
        JsonNode results = root.get("results");
        assertThat(results).extracting(r -> r.get("setup").asText() + " " + r.get("load").asText())
                .containsExactly("none normal", "percentile normal", "none overload", "percentile overload");
        JsonNode none = results.get(0);
        JsonNode percentile = results.get(1);
        assertThat(none.get("hedges").asLong()).isZero();
        assertThat(percentile.get("p99Ms").asDouble()).isLessThan(none.get("p99Ms").asDouble());
        for (String field : new String[] {"p50Ms", "p99Ms", "p999Ms", "extraLoad", "calls", "attempts", "hedgesWon"}) {
            assertThat(percentile.get(field).isNumber()).as(field).isTrue();
        }
        Document svg = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(chart.toFile());
        assertThat(svg.getDocumentElement().getTextContent()).contains("Hedging a long tail")
                .contains("percentile (normal): p50 ").contains("none (overload): ");
    }

    @Test
    void tailOptionsBelongToTheTailScenario() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "layers", "--tail-share", "0.1");

        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("--tail-share and --tail-factor are for --scenario tail");
    }

    @Test
    void aBadTailShareIsRefusedNamingIt() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "tail", "--tail-share", "1.5");

        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("--scenario tail: tailShare must be in [0, 1), got 1.5");
    }

    @Test
    void anUnknownSetUpIsRefusedListingTheKnownOnes() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "tail", "--setups", "always");

        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("--setups: set-up must be one of none, fixed, fixed+budget, percentile, "
                + "percentile+budget, got 'always'");
    }
}
