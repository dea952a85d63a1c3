package dev.stagger.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;

/** Panel 8 in real headless Chromium: the layers scenario with the guards as switches. */
class LayersPanelTest {
    @TempDir
    static Path data;

    static DemoPage page;
    static ChromeDriver browser;
    static String url;

    @BeforeAll
    static void start() throws Exception {
        page = DemoPage.start(data);
        browser = page.browser;
        url = page.url;
    }

    @AfterAll
    static void stop() throws Exception {
        if (page != null) {
            page.close();
        }
    }

    private void setSwitch(String name, boolean on) {
        WebElement box = browser.findElement(By.cssSelector("#layers-form [name=" + name + "]"));
        if (box.isSelected() != on) {
            box.click();
        }
    }

    private WebElement run() {
        browser.findElement(By.id("layers-button")).click();
        WebElement status = browser.findElement(By.id("layers-status"));
        Browser.waitUpTo(browser, 60).until(ExpectedConditions.attributeToBe(status, "data-done", "true"));
        return status;
    }

    private double barWidth(String setup, String part) {
        return Double.parseDouble(browser.findElement(By.cssSelector(
                "#layers-svg rect.layers-bar[data-setup='" + setup + "'][data-part='" + part + "']")).getAttribute("width"));
    }

    @Test
    void naiveRetriesMultiplyThroughTheTiersAndStaggersGuardsKeepOneLayer() throws Exception {
        browser.get(url);
        Browser.fill(browser, "layers-form", "tiers", "3");
        Browser.fill(browser, "layers-form", "attempts", "3");
        setSwitch("oneLayer", false);
        setSwitch("deadline", false);
        setSwitch("budget", false);

        WebElement status = run();

        assertThat(status.getAttribute("data-setup")).isEqualTo("naive");
        assertThat(status.getAttribute("data-max")).isEqualTo("27");
        assertThat(Double.parseDouble(status.getAttribute("data-bottom"))).isGreaterThan(20);
        assertThat(Double.parseDouble(status.getAttribute("data-late"))).isGreaterThan(8);
        assertThat(status.getText()).contains("3^3 = 27").contains("after the user gave up");
        assertThat(barWidth("naive", "late")).isPositive();

        setSwitch("oneLayer", true);
        setSwitch("deadline", true);
        setSwitch("budget", true);

        status = run();

        assertThat(status.getAttribute("data-setup")).isEqualTo("stagger");
        assertThat(Integer.parseInt(status.getAttribute("data-max"))).isLessThanOrEqualTo(3);
        assertThat(status.getAttribute("data-late")).isEqualTo("0.0");
        // both runs on one chart and in the table, the naive bar the longer
        assertThat(barWidth("naive", "on-time") + barWidth("naive", "late"))
                .isGreaterThan(5 * (barWidth("stagger", "on-time") + barWidth("stagger", "late")));
        List<WebElement> rows = browser.findElements(By.cssSelector("#layers-table tbody tr"));
        assertThat(rows).extracting(r -> r.getAttribute("data-setup")).containsExactly("naive", "stagger");
        assertThat(browser.findElements(By.cssSelector("#layers-svg .tick"))).hasSizeGreaterThanOrEqualTo(3);

        // at phone width the chart is drawn again to fit, and nothing is wider than the screen
        browser.manage().window().setSize(new Dimension(390, 1800));
        Browser.waitUpTo(browser, 10).until(d -> Double.parseDouble(
                browser.findElement(By.id("layers-svg")).getAttribute("width")) <= 390);
        browser.executeScript("document.getElementById('layers').scrollIntoView()");
        Files.createDirectories(Path.of("target"));
        Files.write(Path.of("target", "demo-layers-phone.png"), browser.getScreenshotAs(OutputType.BYTES));
        assertThat(((Number) browser.executeScript("return document.documentElement.scrollWidth")).intValue())
                .isLessThanOrEqualTo(390);
    }
}
