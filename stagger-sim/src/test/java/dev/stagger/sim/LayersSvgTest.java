package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class LayersSvgTest {

    @Test
    void drawsOneBarPerSetUpWithTheLatePartOnTopAndBothReferenceLines() throws Exception {
        LayersConfig config = LayersConfig.defaults().withTraffic(5, Duration.ofSeconds(10))
                .withFailures(Duration.ZERO, Duration.ofSeconds(30), 0)
                .withSetups(List.of(LayersSetup.NAIVE, LayersSetup.STAGGER));
        List<LayersResult> results = Simulation.layers(config);
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        Document svg = f.newDocumentBuilder().parse(new ByteArrayInputStream(
                SvgChart.attemptsPerLayer("layers <3 tiers>", results).getBytes(StandardCharsets.UTF_8)));

        assertThat(svg.getElementsByTagName("title").item(0).getTextContent()).isEqualTo("layers <3 tiers>");
        String text = svg.getDocumentElement().getTextContent();
        assertThat(text).contains("every tier retries: 3^3 = 27").contains("one layer retries: 3")
                .contains("naive: 27.0 per request").contains("stagger: ");
        NodeList rects = svg.getElementsByTagName("rect");
        double naiveOnTime = -1;
        double naiveLate = -1;
        double staggerLate = -1;
        for (int i = 0; i < rects.getLength(); i++) {
            Element rect = (Element) rects.item(i);
            String title = rect.getTextContent();
            double height = Double.parseDouble(rect.getAttribute("height").isEmpty() ? "0" : rect.getAttribute("height"));
            if ("on-time".equals(rect.getAttribute("class")) && title.startsWith("naive")) {
                naiveOnTime = height;
            } else if ("late".equals(rect.getAttribute("class")) && title.startsWith("naive")) {
                naiveLate = height;
            } else if ("late".equals(rect.getAttribute("class")) && title.startsWith("stagger")) {
                staggerLate = height;
            }
        }
        // 27 attempts, about half of them after the user's 2 s: both parts of the naive bar are drawn
        assertThat(naiveOnTime).isPositive();
        assertThat(naiveLate).isPositive();
        assertThat(staggerLate).isZero();
    }

    @Test
    void refusesNoResults() {
        assertThatThrownBy(() -> SvgChart.attemptsPerLayer("t", List.of())).hasMessage("results must not be empty");
    }
}
