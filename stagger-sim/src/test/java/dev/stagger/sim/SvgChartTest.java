package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

class SvgChartTest {

    private static Document parse(String svg) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        return f.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void drawsOneLoadLinePerStrategyForAnOutage() throws Exception {
        List<SimulationResult> results = Simulation.outage(OutageConfig.defaults().withClients(10).withRuns(1)
                .withStrategies(List.of(Strategy.NONE, Strategy.FULL_JITTER, Strategy.EXPONENTIAL)));
        Document svg = parse(SvgChart.render("outage <test> & more", results));
        assertThat(svg.getDocumentElement().getLocalName()).isEqualTo("svg");
        assertThat(svg.getDocumentElement().getNamespaceURI()).isEqualTo("http://www.w3.org/2000/svg");
        assertThat(svg.getElementsByTagName("polyline").getLength()).isEqualTo(3);
        assertThat(svg.getElementsByTagName("title").item(0).getTextContent()).isEqualTo("outage <test> & more");
    }

    @Test
    void drawsOneGoodputLinePerSetUpForTheMetastableScenario() throws Exception {
        MetastableConfig config = MetastableConfig.defaults().withTrigger(java.time.Duration.ofSeconds(2),
                java.time.Duration.ofSeconds(2), 0.5).withDuration(java.time.Duration.ofSeconds(6))
                .withScenarios(List.of(MetastableScenario.BUDGET, MetastableScenario.SHEDDING));
        Document svg = parse(SvgChart.goodputOverTime("metastable", Simulation.metastable(config)));

        assertThat(svg.getElementsByTagName("polyline").getLength()).isEqualTo(2);
        String text = svg.getDocumentElement().getTextContent();
        assertThat(text).contains("budget: recovered").contains("shedding: recovered").contains("capacity halved")
                .contains("capacity 1000/s").contains("reduced 500/s");
    }

    @Test
    void drawsCallsAndCompletionBarsPerStrategyForContention() throws Exception {
        List<SimulationResult> results = Simulation.contention(ContentionConfig.defaults().withClients(10).withRuns(1)
                .withStrategies(List.of(Strategy.NONE, Strategy.FULL_JITTER)));
        Document svg = parse(SvgChart.render("contention", results));
        String text = svg.getDocumentElement().getTextContent();
        assertThat(text).contains("none").contains("full-jitter");
        // background + two bars per strategy + two legend swatches
        assertThat(svg.getElementsByTagName("rect").getLength()).isEqualTo(1 + 2 * 2 + 2);
    }

    @Test
    void picksRoundAxisMaxima() {
        assertThat(SvgChart.niceCeiling(870)).isEqualTo(1000);
        assertThat(SvgChart.niceCeiling(1849)).isEqualTo(2000);
        assertThat(SvgChart.niceCeiling(4100)).isEqualTo(5000);
    }
}
