package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/** {@code stagger simulate --scenario layers}: the table, the JSON, the chart and the options. */
class SimulateLayersTest {

    @Test
    void theTableShowsTheMultiplicationWithoutGuardsAndOneLayerWithThem() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "layers", "--no-progress");

        assertThat(o.exitCode()).isZero();
        assertThat(o.out()).contains("scenario layers: 3 tiers x 3 attempts (27 at the bottom if every tier retries)")
                .contains("the bottom: down from 5 s to 25 s; users wait 2000 ms");
        String naive = line(o.out(), "naive ");
        String stagger = line(o.out(), "stagger ");
        assertThat(naive).startsWith("naive      none ");
        assertThat(stagger).startsWith("stagger    one-layer, deadline, budget ");
        // bottom/r, late/r, max/r: the first columns after the guards
        String[] n = naive.substring("naive      none".length()).trim().split("\\s+");
        String[] s = stagger.substring("stagger    one-layer, deadline, budget".length()).trim().split("\\s+");
        assertThat(Double.parseDouble(n[0])).isGreaterThan(20);
        assertThat(Double.parseDouble(n[1])).isGreaterThan(8);
        assertThat(n[2]).isEqualTo("27");
        assertThat(Double.parseDouble(s[0])).isLessThanOrEqualTo(3);
        assertThat(s[1]).isEqualTo("0.0");
        assertThat(Integer.parseInt(s[2])).isLessThanOrEqualTo(3);
        assertThat(line(o.out(), "deadline ")).isNotEmpty();
        assertThat(line(o.out(), "one-layer ")).isNotEmpty();
    }

    private static String line(String out, String start) {
        return out.lines().filter(l -> l.startsWith(start)).findFirst().orElse("");
    }

    @Test
    void jsonAndTheChartFollowTheOptions(@TempDir Path dir) throws Exception {
        Path chart = dir.resolve("layers.svg");
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "layers", "--tiers", "2", "--attempts", "4",
                "--setups", "naive,stagger", "--seed", "7", "--json", "--svg", chart.toString());

        assertThat(o.exitCode()).isZero();
        assertThat(o.err()).contains("wrote " + chart);
        JsonNode root = new ObjectMapper().readTree(o.out());
        assertThat(root.get("scenario").asText()).isEqualTo("layers");
        assertThat(root.get("seed").asLong()).isEqualTo(7);
        assertThat(root.get("tiers").asInt()).isEqualTo(2);
        assertThat(root.get("attempts").asInt()).isEqualTo(4);
        assertThat(root.get("naiveFanOut").asInt()).isEqualTo(16);
        JsonNode results = root.get("results");
        assertThat(results).hasSize(2);
        JsonNode naive = results.get(0);
        JsonNode stagger = results.get(1);
        assertThat(naive.get("setup").asText()).isEqualTo("naive");
        assertThat(naive.get("maxBottomAttemptsPerRequest").asInt()).isEqualTo(16);
        assertThat(naive.get("arrivalsPerRequest")).hasSize(3);
        assertThat(stagger.get("maxBottomAttemptsPerRequest").asInt()).isLessThanOrEqualTo(4);
        assertThat(stagger.get("lateAttempts").asLong()).isZero();
        for (String field : new String[] {"bottomAttemptsPerRequest", "lateAttemptsPerRequest", "successShare", "p50Ms",
            "p90Ms", "p99Ms", "requests", "succeeded", "timedOut"}) {
            assertThat(stagger.get(field).isNumber()).as(field).isTrue();
        }
        assertThat(stagger.get("innerEndReasons").has("BUDGET")).isTrue();
        Document svg = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(chart.toFile());
        assertThat(svg.getDocumentElement().getTextContent()).contains("every tier retries: 4^2 = 16")
                .contains("naive: ").contains("stagger: ");
    }

    @Test
    void aFailureRateReplacesTheOutage() throws Exception {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "layers", "--failure-rate", "0.5",
                "--setups", "stagger", "--json");

        assertThat(o.exitCode()).isZero();
        JsonNode root = new ObjectMapper().readTree(o.out());
        assertThat(root.get("failureRate").asDouble()).isEqualTo(0.5);
        assertThat(root.get("outageToSecond").asLong()).isEqualTo(root.get("outageFromSecond").asLong());
        JsonNode stagger = root.get("results").get(0);
        assertThat(stagger.get("affectedRequests").asLong()).isEqualTo(stagger.get("requests").asLong());
    }

    @Test
    void theSameSeedPrintsTheSameResults() throws Exception {
        String[] args = {"simulate", "--scenario", "layers", "--setups", "naive,one-layer", "--json"};
        ObjectMapper m = new ObjectMapper();
        assertThat(m.readTree(SimCliRunner.run(args).out()).get("results"))
                .isEqualTo(m.readTree(SimCliRunner.run(args).out()).get("results"));
    }

    @Test
    void badOptionsAreOneLineErrorsWithExitTwo() {
        SimCliRunner.Outcome tiers = SimCliRunner.run("simulate", "--scenario", "layers", "--tiers", "9");
        assertThat(tiers.exitCode()).isEqualTo(2);
        assertThat(tiers.err()).contains("--scenario layers: tiers must be at most 6, got 9");
        SimCliRunner.Outcome fanOut = SimCliRunner.run("simulate", "--scenario", "layers", "--tiers", "5", "--attempts", "5");
        assertThat(fanOut.err()).contains("attempts^tiers must be at most 1024, got 5^5");
        SimCliRunner.Outcome rate = SimCliRunner.run("simulate", "--scenario", "layers", "--failure-rate", "2");
        assertThat(rate.err()).contains("failureRate must be in [0, 1], got 2.0");
        SimCliRunner.Outcome setup = SimCliRunner.run("simulate", "--scenario", "layers", "--setups", "hope");
        assertThat(setup.exitCode()).isEqualTo(2);
        assertThat(setup.err()).contains("--setups: set-up must be one of naive, deadline, one-layer, stagger, got 'hope'");
        SimCliRunner.Outcome strategies = SimCliRunner.run("simulate", "--scenario", "layers", "--budget");
        assertThat(strategies.exitCode()).isEqualTo(2);
        assertThat(strategies.err()).contains("use --setups");
        SimCliRunner.Outcome elsewhere = SimCliRunner.run("simulate", "--scenario", "outage", "--tiers", "2");
        assertThat(elsewhere.exitCode()).isEqualTo(2);
        assertThat(elsewhere.err()).contains("--tiers, --attempts and --failure-rate are for --scenario layers");
        SimCliRunner.Outcome meta = SimCliRunner.run("simulate", "--scenario", "metastable", "--attempts", "2");
        assertThat(meta.exitCode()).isEqualTo(2);
    }

    @Test
    void helpNamesTheScenarioAndAnExample() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--help");
        assertThat(o.out()).contains("layers      users call a chain of --tiers services")
                .contains("stagger simulate --scenario layers --tiers 4 --attempts 3 --svg layers.svg")
                .contains("--failure-rate=R");
    }
}
