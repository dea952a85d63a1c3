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
import org.openqa.selenium.support.ui.Select;

/** Panel 9 in real headless Chromium: tail latency with and without hedging, at normal load and near capacity. */
class TailPanelTest {
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

    private WebElement run() {
        browser.findElement(By.id("tail-button")).click();
        WebElement status = browser.findElement(By.id("tail-status"));
        Browser.waitUpTo(browser, 60).until(ExpectedConditions.attributeToBe(status, "data-done", "true"));
        return status;
    }

    private double barWidth(String setup, String load) {
        return Double.parseDouble(browser.findElement(By.cssSelector("#tail-svg-" + load
                + " rect.tail-bar[data-setup='" + setup + "'][data-part='p99']")).getAttribute("width"));
    }

    private static double number(WebElement status, String attribute) {
        return Double.parseDouble(status.getAttribute(attribute));
    }

    @Test
    void percentileHedgingCutsTheTailAndAFixedDelayIsHeldBackNearCapacity() throws Exception {
        browser.get(url);

        WebElement status = run();

        assertThat(number(status, "data-p99-percentile")).isLessThanOrEqualTo(0.5 * number(status, "data-p99-none"));
        assertThat(number(status, "data-extra-percentile")).isLessThan(0.06);
        // near capacity a fixed delay's hedges lose and the hedge credit pauses them; the budget adds its cap
        assertThat(number(status, "data-extra-fixed-overload")).isLessThan(0.05);
        assertThat(number(status, "data-extra-capped-overload")).isLessThanOrEqualTo(number(status, "data-extra-fixed-overload"));
        assertThat(status.getText()).contains("2 % of requests 20× slower").contains("takes p99 from");
        assertThat(barWidth("percentile", "normal")).isLessThan(barWidth("none", "normal") / 2);
        List<WebElement> rows = browser.findElements(By.cssSelector("#tail-table tbody tr"));
        assertThat(rows).extracting(r -> r.getAttribute("data-setup") + " " + r.getAttribute("data-load")).containsExactly(
                "none normal", "fixed normal", "fixed+budget normal", "percentile normal", "percentile+budget normal",
                "none overload", "fixed overload", "fixed+budget overload", "percentile overload",
                "percentile+budget overload");
        assertThat(browser.findElements(By.cssSelector("#tail-svg-overload .tick"))).hasSizeGreaterThanOrEqualTo(3);

        // at phone width the charts are drawn again to fit, and nothing is wider than the screen
        browser.manage().window().setSize(new Dimension(390, 1800));
        Browser.waitUpTo(browser, 10).until(d -> Double.parseDouble(
                browser.findElement(By.id("tail-svg-normal")).getAttribute("width")) <= 390);
        browser.executeScript("document.getElementById('tail').scrollIntoView()");
        Files.createDirectories(Path.of("target"));
        Files.write(Path.of("target", "demo-tail-phone.png"), browser.getScreenshotAs(OutputType.BYTES));
        assertThat(((Number) browser.executeScript("return document.documentElement.scrollWidth")).intValue())
                .isLessThanOrEqualTo(390);
    }

    @Test
    void aLongerTailIsChosenOnTheForm() {
        browser.manage().window().setSize(new Dimension(1280, 1800));
        browser.get(url);
        new Select(browser.findElement(By.cssSelector("#tail-form [name=tailShare]"))).selectByValue("0.05");
        new Select(browser.findElement(By.cssSelector("#tail-form [name=tailFactor]"))).selectByValue("10");

        WebElement status = run();

        assertThat(status.getText()).startsWith("5 % of requests 10× slower");
    }
}
