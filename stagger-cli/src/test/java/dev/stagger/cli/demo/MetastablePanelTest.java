package dev.stagger.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;

/** Panel 7 in real headless Chromium: the metastable scenario played with the guards as switches. */
class MetastablePanelTest {
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
        WebElement box = browser.findElement(By.cssSelector("#meta-form [name=" + name + "]"));
        if (box.isSelected() != on) {
            box.click();
        }
    }

    private WebElement play() {
        browser.findElement(By.id("meta-button")).click();
        WebElement status = browser.findElement(By.id("meta-status"));
        Browser.waitUpTo(browser, 120).until(ExpectedConditions.attributeToBe(status, "data-played", "true"));
        return status;
    }

    @Test
    void theGuardsKeepTheServerServingThroughTheTriggerAndNaiveRetriesKeepItDown() {
        browser.get(url);
        new Select(browser.findElement(By.cssSelector("#meta-form [name=retries]"))).selectByValue("defaults");
        setSwitch("budget", true);
        setSwitch("throttle", true);
        setSwitch("shedding", true);
        Browser.fill(browser, "meta-form", "seconds", "30");

        WebElement status = play();

        assertThat(status.getAttribute("data-setup")).isEqualTo("defaults+budget+throttle+shedding");
        assertThat(status.getAttribute("data-recovered")).isEqualTo("0");
        assertThat(status.getText()).contains("during the trigger").contains("shed");
        assertThat(browser.findElements(By.cssSelector("#meta-svg polyline.meta-line"))).hasSize(1);

        new Select(browser.findElement(By.cssSelector("#meta-form [name=retries]"))).selectByValue("naive");
        setSwitch("budget", false);
        setSwitch("throttle", false);
        setSwitch("shedding", false);

        status = play();

        assertThat(status.getAttribute("data-setup")).isEqualTo("naive");
        assertThat(status.getAttribute("data-recovered")).isEqualTo("never");
        // both runs on one chart, the legend below it saying which recovered
        assertThat(browser.findElements(By.cssSelector("#meta-svg polyline.meta-line"))).hasSize(2);
        assertThat(browser.findElement(By.id("meta-legend")).getText()).contains("naive: never recovered")
                .contains("defaults+budget+throttle+shedding: recovered after 0 s");
    }
}
