package dev.stagger.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;

/**
 * Panel 6 in real headless Chromium: the store goes down, the breaker opens, prices stay on the
 * page with their age, an order is queued and placed once the store is back, and the account
 * answers a message saying when to try again.
 */
class DemoStorePanelTest {
    @TempDir
    static Path data;

    static DemoPage page;
    static ChromeDriver browser;
    static String url;

    @BeforeAll
    static void start() throws Exception {
        page = DemoPage.start(data);
        browser = page.browser;
        url = page.url + "#store";
    }

    @AfterAll
    static void stop() throws Exception {
        if (page != null) {
            page.close();
        }
    }

    @Test
    void whileTheStoreIsDownThePageShowsStalePricesQueuesTheOrderAndSaysWhenToTryAgain() throws Exception {
        browser.get(url);
        Browser.waitUpTo(browser, 20).until(ExpectedConditions.attributeToBe(By.id("store-prices-box"), "data-stale", "false"));

        browser.findElement(By.id("store-down")).click();
        Browser.waitUpTo(browser, 10).until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#store-state [data-down=true]")));
        browser.findElement(By.id("store-prices")).click();
        Browser.waitUpTo(browser, 20).until(ExpectedConditions.attributeToBe(By.id("store-prices-box"), "data-stale", "true"));
        assertThat(browser.findElement(By.id("store-prices-box")).getText()).contains("ACME 41.50", "as of", "s ago");
        Browser.waitUpTo(browser, 10).until(ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("#store-state [data-breaker=OPEN]")));

        browser.findElement(By.id("store-order")).click();
        Browser.waitUpTo(browser, 20).until(ExpectedConditions.attributeToBe(By.id("store-order-status"), "data-deferred", "true"));
        String order = browser.findElement(By.id("store-order-status")).getAttribute("data-order");
        assertThat(browser.findElement(By.id("store-order-status")).getText()).contains("queued");

        browser.findElement(By.id("store-account")).click();
        Browser.waitUpTo(browser, 20).until(ExpectedConditions.textToBePresentInElementLocated(By.id("store-message"), "try again in"));
        assertThat(browser.findElement(By.id("store-message")).getText())
                .startsWith("Your account is unavailable right now.")
                .doesNotContain("503").doesNotContain("Exception").doesNotContain("127.0.0.1");

        browser.findElement(By.id("store-up")).click();
        Browser.waitUpTo(browser, 60).until(ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("#store-orders tr[data-order='" + order + "'][data-state=SUCCEEDED]")));
        assertThat(browser.findElement(By.cssSelector("#store-orders tr[data-order='" + order + "']")).getText())
                .contains("placed");
        Path shot = Path.of("target", "demo-store-screenshot.png");
        Files.createDirectories(shot.getParent());
        Files.write(shot, browser.getScreenshotAs(OutputType.BYTES));
    }
}
