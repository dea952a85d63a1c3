package dev.stagger.apicheck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * {@code stagger-bom} lists exactly the modules the build publishes (every module of the root pom
 * that does not set {@code maven.deploy.skip}), at the build's version, and has the build's groupId
 * and version. The BOM has no parent (it would pass the parent's dependency management on to its
 * users), so nothing else keeps the two in step. That a consumer importing it resolves is shown by
 * {@code .ci/rehearse-release}.
 */
class BomTest {

    private static final Path ROOT = ApiDumpTest.projectRoot();

    @Test
    void listsExactlyThePublishedModulesAtTheBuildsVersion() throws Exception {
        Element root = read(ROOT.resolve("pom.xml"));
        Element bom = read(ROOT.resolve("stagger-bom/pom.xml"));

        assertThat(text(bom, "groupId")).isEqualTo(text(root, "groupId"));
        assertThat(text(bom, "version")).isEqualTo(text(root, "version"));
        assertThat(child(bom, "parent")).as("stagger-bom has no parent").isNull();

        TreeSet<String> published = publishedModules();

        TreeSet<String> listed = new TreeSet<>();
        Element managed = child(child(bom, "dependencyManagement"), "dependencies");
        assertThat(managed).as("<dependencyManagement><dependencies> in stagger-bom").isNotNull();
        for (Element dependency : children(managed, "dependency")) {
            assertThat(text(dependency, "groupId")).isEqualTo("dev.stagger");
            assertThat(text(dependency, "version")).as(text(dependency, "artifactId")).isEqualTo("${project.version}");
            listed.add(text(dependency, "artifactId"));
        }

        assertThat(published).contains("stagger-core", "stagger-spring-boot-starter")
                .doesNotContain("stagger-cli", "stagger-benchmarks", "stagger-api-check");
        assertThat(listed).isEqualTo(published);
    }

    /**
     * The directory names (which are the artifactIds) of the modules the build deploys: the root pom's
     * modules that do not set {@code maven.deploy.skip}, less the BOM itself.
     */
    static TreeSet<String> publishedModules() throws IOException, ParserConfigurationException, SAXException {
        Element modules = child(read(ROOT.resolve("pom.xml")), "modules");
        if (modules == null) {
            throw new AssertionError("no <modules> in the root pom");
        }
        TreeSet<String> published = new TreeSet<>();
        for (String module : texts(modules, "module")) {
            Element pom = read(ROOT.resolve(module).resolve("pom.xml"));
            assertThat(text(pom, "artifactId")).as("the directory of module " + module).isEqualTo(module);
            if (!module.equals("stagger-bom") && !"true".equals(property(pom, "maven.deploy.skip"))) {
                published.add(module);
            }
        }
        return published;
    }

    private static Element read(Path pom) throws IOException, ParserConfigurationException, SAXException {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        try (var in = Files.newInputStream(pom)) {
            return factory.newDocumentBuilder().parse(in).getDocumentElement();
        }
    }

    private static String property(Element pom, String name) {
        Element value = child(child(pom, "properties"), name);
        return value == null ? "" : value.getTextContent().trim();
    }

    private static String text(Element parent, String name) {
        Element child = child(parent, name);
        if (child == null) {
            throw new AssertionError("no <" + name + "> in <" + parent.getTagName() + ">");
        }
        return child.getTextContent().trim();
    }

    private static List<String> texts(Element parent, String name) {
        List<String> texts = new ArrayList<>();
        for (Element child : children(parent, name)) {
            texts.add(child.getTextContent().trim());
        }
        return texts;
    }

    private static @Nullable Element child(@Nullable Element parent, String name) {
        if (parent == null) {
            return null;
        }
        List<Element> found = children(parent, name);
        return found.isEmpty() ? null : found.get(0);
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node node = nodes.item(i);
            if (node instanceof Element element && element.getTagName().equals(name)) {
                found.add(element);
            }
        }
        return found;
    }
}
