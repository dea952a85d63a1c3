package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

class SimulateCommandTest {

    @Test
    void printsOneTableRowPerStrategyAndTheEventRate() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--clients", "20", "--runs", "2",
                "--strategies", "exponential,full-jitter");
        assertThat(o.exitCode()).isZero();
        assertThat(o.out()).contains("scenario contention: 20 clients, 2 runs");
        assertThat(o.out().lines().filter(l -> l.startsWith("exponential ") || l.startsWith("full-jitter "))).hasSize(2);
        assertThat(o.out()).containsPattern("simulated events in [0-9.]+ s: [0-9,]+ events/s");
    }

    @Test
    void printsTheOutageColumnsWithGuardsInTheLabel() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "outage", "--clients", "10", "--runs", "1",
                "--strategies", "full-jitter", "--budget", "--breaker");
        assertThat(o.exitCode()).isZero();
        assertThat(o.out()).contains("x-down").contains("drain").contains("full-jitter+budget+breaker");
    }

    @Test
    void jsonFollowsTheDocumentedSchema() throws Exception {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "outage", "--clients", "10", "--runs", "1",
                "--strategies", "none,decorrelated-jitter", "--seed", "42", "--json");
        assertThat(o.exitCode()).isZero();
        JsonNode root = new ObjectMapper().readTree(o.out());
        assertThat(root.get("scenario").asText()).isEqualTo("outage");
        assertThat(root.get("clients").asInt()).isEqualTo(10);
        assertThat(root.get("seed").asLong()).isEqualTo(42);
        assertThat(root.get("eventsPerSecond").asLong()).isPositive();
        JsonNode results = root.get("results");
        assertThat(results).hasSize(2);
        JsonNode first = results.get(0);
        assertThat(first.get("strategy").asText()).isEqualTo("none");
        for (String field : new String[] {"calls", "completionMs", "peakLoad", "offeredRate", "loadDuringOutage",
                "wastedCalls", "drainMs", "p50Ms", "p90Ms", "p99Ms"}) {
            assertThat(first.get(field).isNumber()).as(field).isTrue();
        }
        assertThat(first.get("callsStarted").asLong())
                .isEqualTo(first.get("succeeded").asLong() + first.get("gaveUp").asLong());
        assertThat(first.get("load").isArray()).isTrue();
        assertThat(first.get("load").size()).isGreaterThanOrEqualTo(80);
        assertThat(first.get("endReasons").has("SUCCESS")).isTrue();
    }

    @Test
    void theMetastableScenarioPrintsGoodputRecoveryAndP99PerSetUp(@TempDir Path dir) throws Exception {
        Path chart = dir.resolve("metastable.svg");
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "metastable", "--setups", "budget,shedding",
                "--json", "--svg", chart.toString());

        assertThat(o.exitCode()).isZero();
        JsonNode root = new ObjectMapper().readTree(o.out());
        assertThat(root.get("scenario").asText()).isEqualTo("metastable");
        assertThat(root.get("capacity").asDouble()).isEqualTo(1000.0);
        assertThat(root.get("triggerFromSecond").asInt()).isEqualTo(10);
        JsonNode results = root.get("results");
        assertThat(results).hasSize(2);
        assertThat(results.get(0).get("setup").asText()).isEqualTo("budget");
        JsonNode shedding = results.get(1);
        for (String field : new String[] {"goodputDuringTrigger", "goodputAfterTrigger", "recoveredAfterSeconds", "p99Ms"}) {
            assertThat(shedding.get(field).isNumber()).as(field).isTrue();
        }
        assertThat(shedding.get("goodput")).hasSize(60);
        assertThat(shedding.get("shed").asLong()).isPositive();
        Document svg = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(chart.toFile());
        assertThat(svg.getElementsByTagName("polyline").getLength()).isEqualTo(2);
    }

    @Test
    void theMetastableScenarioTakesSetUpsNotStrategies() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "metastable", "--strategies", "none");
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("use --setups");
        SimCliRunner.Outcome unknown = SimCliRunner.run("simulate", "--scenario", "metastable", "--setups", "hope");
        assertThat(unknown.exitCode()).isEqualTo(2);
        assertThat(unknown.err()).contains("--setups: scenario must be one of naive, exponential, defaults, budget, throttle, shedding, got 'hope'");
    }

    @Test
    void theSameSeedPrintsTheSameJson() throws Exception {
        String[] args = {"simulate", "--clients", "10", "--runs", "2", "--strategies", "full-jitter", "--json"};
        ObjectMapper m = new ObjectMapper();
        JsonNode a = m.readTree(SimCliRunner.run(args).out()).get("results");
        JsonNode b = m.readTree(SimCliRunner.run(args).out()).get("results");
        assertThat(a).isEqualTo(b);
    }

    @Test
    void writesAWellFormedSvgChart(@TempDir Path dir) throws Exception {
        Path svg = dir.resolve("chart.svg");
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "outage", "--clients", "10", "--runs", "1",
                "--strategies", "none,full-jitter", "--svg", svg.toString());
        assertThat(o.exitCode()).isZero();
        assertThat(o.err()).contains("wrote " + svg);
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        Document doc = f.newDocumentBuilder().parse(svg.toFile());
        assertThat(doc.getDocumentElement().getLocalName()).isEqualTo("svg");
        assertThat(doc.getElementsByTagName("polyline").getLength()).isEqualTo(2);
    }

    @Test
    void aChartThatCannotBeWrittenExitsWithOne(@TempDir Path dir) throws Exception {
        Path blocked = dir.resolve("missing-dir").resolve("chart.svg");
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--clients", "5", "--runs", "1", "--strategies", "none",
                "--svg", blocked.toString());
        assertThat(o.exitCode()).isEqualTo(1);
        assertThat(o.err()).contains("cannot write");
        assertThat(Files.exists(blocked)).isFalse();
    }

    @Test
    void aChartPathInAMissingDirectoryIsRefusedBeforeSimulatingWithTheReason() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--clients", "5", "--runs", "1", "--strategies", "none",
                "--svg", "/nonexistent/dir/x.svg");
        assertThat(o.exitCode()).isEqualTo(1);
        assertThat(o.err()).contains("cannot write /nonexistent/dir/x.svg", "the directory /nonexistent/dir does not exist");
        assertThat(o.out()).as("nothing was simulated").isEmpty();
    }

    @Test
    void aChartPathThatIsADirectoryIsRefusedBeforeSimulating(@TempDir Path dir) {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--clients", "5", "--runs", "1", "--strategies", "none",
                "--svg", dir.toString());
        assertThat(o.exitCode()).isEqualTo(1);
        assertThat(o.err()).contains("cannot write " + dir, "is a directory");
        assertThat(o.out()).isEmpty();
    }

    @Test
    void aChartPathUnderAFileIsRefusedBeforeSimulating(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("plain"), "x");
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--clients", "5", "--runs", "1", "--strategies", "none",
                "--svg", file.resolve("x.svg").toString());
        assertThat(o.exitCode()).isEqualTo(1);
        assertThat(o.err()).contains(file + " is not a directory");
        assertThat(o.out()).isEmpty();
    }

    @Test
    void anUnknownStrategyIsAOneLineErrorWithExitTwo() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--strategies", "full-jitter,bogus");
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err().strip().lines()).hasSize(1);
        assertThat(o.err()).contains("'bogus'");
        assertThat(o.out()).isEmpty();
    }

    @Test
    void badNumbersAndScenariosExitWithTwo() {
        assertThat(SimCliRunner.run("simulate", "--clients", "0").exitCode()).isEqualTo(2);
        assertThat(SimCliRunner.run("simulate", "--runs", "-1").exitCode()).isEqualTo(2);
        assertThat(SimCliRunner.run("simulate", "--clients", "many").exitCode()).isEqualTo(2);
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--scenario", "earthquake");
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("--scenario must be contention, outage, metastable, layers or tail, got 'earthquake'");
    }

    @Test
    void helpShowsExamples() {
        SimCliRunner.Outcome o = SimCliRunner.run("simulate", "--help");
        assertThat(o.exitCode()).isZero();
        assertThat(o.out()).contains("Examples:").contains("stagger simulate --scenario outage --budget --svg");
    }
}
