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
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/** The demo page in real headless Chromium against a demo server on a free loopback port. */
class DemoPageTest {
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
            try {
                saveScreenshotOfAUsedPage(Path.of("target", "demo-screenshot.png"));
            } finally { // a failed screenshot must not leave the browser or the server running
                page.close();
            }
        }
    }

    /** A test artifact: the page after a send, a herd run and a payment, as a person would see it. */
    private static void saveScreenshotOfAUsedPage(Path shot) throws Exception {
        Files.createDirectories(shot.getParent());
        browser.manage().window().setSize(new org.openqa.selenium.Dimension(1200, 3400));
        browser.get(url);
        DemoPageTest page = new DemoPageTest();
        page.fill("send-form", "script", "503,503,200");
        page.fill("send-form", "baseMs", "100");
        browser.findElement(By.id("send-button")).click();
        page.waitUpTo(20).until(ExpectedConditions.attributeToBeNotEmpty(browser.findElement(By.id("send-status")), "data-reason"));
        page.fill("herd-form", "runs", "2");
        browser.findElement(By.id("herd-button")).click();
        page.waitUpTo(60).until(ExpectedConditions.numberOfElementsToBeMoreThan(By.cssSelector("#herd-charts svg"), 2));
        browser.findElement(By.id("pay-key")).click();
        page.waitUpTo(30).until(ExpectedConditions.attributeToBe(By.id("pay-status"), "data-charges", "1"));
        Files.write(shot, browser.getScreenshotAs(OutputType.BYTES));
    }

    private WebDriverWait waitUpTo(int seconds) {
        return Browser.waitUpTo(browser, seconds);
    }

    private void fill(String form, String name, String value) {
        Browser.fill(browser, form, name, value);
    }

    @Test
    void sendShowsEveryScriptedAttemptAndWaitOnTheTimeline() {
        browser.get(url);
        fill("send-form", "script", "503,503,200");
        fill("send-form", "baseMs", "20");
        fill("send-form", "attemptTimeoutMs", "20000"); // a busy machine must not turn a scripted answer into a timeout
        browser.findElement(By.id("send-button")).click();
        waitUpTo(20).until(ExpectedConditions.attributeToBeNotEmpty(browser.findElement(By.id("send-status")), "data-reason"));

        WebElement status = browser.findElement(By.id("send-status"));
        assertThat(status.getAttribute("data-reason")).isEqualTo("RECOVERED");
        List<WebElement> bars = browser.findElements(By.cssSelector("#timeline .attempt-bar"));
        assertThat(bars).extracting(b -> b.getAttribute("data-outcome")).containsExactly("HTTP 503", "HTTP 503", "HTTP 200");
        assertThat(browser.findElements(By.cssSelector("#timeline .wait-bar"))).hasSize(2);
    }

    @Test
    void aNonRetryableStatusIsTriedOnce() {
        browser.get(url);
        fill("send-form", "script", "400");
        fill("send-form", "attemptTimeoutMs", "20000");
        browser.findElement(By.id("send-button")).click();
        waitUpTo(20).until(ExpectedConditions.attributeToBeNotEmpty(browser.findElement(By.id("send-status")), "data-reason"));
        assertThat(browser.findElement(By.id("send-status")).getAttribute("data-reason")).isEqualTo("NOT_RETRYABLE");
        assertThat(browser.findElements(By.cssSelector("#timeline .attempt-bar"))).hasSize(1);
    }

    @Test
    void hammeringAFailingDownstreamOpensTheBreaker() {
        browser.get(url);
        fill("hammer-form", "calls", "100");
        fill("hammer-form", "failureRate", "1");
        browser.findElement(By.id("hammer-button")).click();
        waitUpTo(60).until(ExpectedConditions.attributeToBeNotEmpty(browser.findElement(By.id("hammer-status")), "data-reasons"));
        assertThat(browser.findElement(By.id("hammer-status")).getAttribute("data-reasons")).contains("CIRCUIT_OPEN");
        waitUpTo(10).until(ExpectedConditions.textToBePresentInElementLocated(By.id("breaker-pill"), "OPEN"));
    }

    @Test
    void theHerdPanelChartsEveryStrategy() {
        browser.get(url);
        fill("herd-form", "clients", "50");
        fill("herd-form", "runs", "2");
        browser.findElement(By.id("herd-button")).click();
        waitUpTo(60).until(ExpectedConditions.numberOfElementsToBeMoreThan(By.cssSelector("#herd-charts svg"), 2));
        // two bar charts (calls, completion) with one bar per strategy, and a load-over-time chart
        assertThat(browser.findElements(By.cssSelector("#herd-charts .herd-bar"))).hasSize(10);
        assertThat(browser.findElements(By.cssSelector("#herd-charts polyline"))).hasSize(3);
        assertThat(browser.findElement(By.id("herd-table")).getText()).contains("full-jitter", "exponential");
    }

    @Test
    void metricsAreServedInPrometheusFormat() throws Exception {
        browser.get(url);
        fill("hammer-form", "calls", "20");
        fill("hammer-form", "failureRate", "0");
        browser.findElement(By.id("hammer-button")).click();
        // any answer will do (the breaker may still be open from another test): the meters exist from the start
        waitUpTo(60).until(ExpectedConditions.attributeToBeNotEmpty(browser.findElement(By.id("hammer-status")), "data-reasons"));
        browser.get(url + "metrics");
        assertThat(browser.getPageSource()).contains("stagger_calls_total", "stagger_circuit_state", "stagger_budget_tokens");
    }

    @Test
    void aPaymentWhoseResponseIsLostIsChargedTwiceWithoutAKeyAndOnceWithOne() {
        browser.get(url);
        browser.findElement(By.id("pay-nokey")).click();
        waitUpTo(30).until(ExpectedConditions.attributeToBe(By.id("pay-status"), "data-charges", "2"));
        assertThat(browser.findElement(By.id("pay-status")).getText()).contains("Without a key", "charged 2 time(s)");

        browser.findElement(By.id("pay-key")).click();
        waitUpTo(30).until(ExpectedConditions.attributeToBe(By.id("pay-status"), "data-charges", "1"));
        assertThat(browser.findElement(By.id("pay-table")).getText()).contains("replayed");
    }

    @Test
    void aRetried400IsTheSame400AndStaggerTriesItOnce() {
        browser.get(url);
        browser.findElement(By.id("pay-400")).click();
        waitUpTo(30).until(ExpectedConditions.textToBePresentInElementLocated(By.id("pay-status"), "Stagger made"));
        assertThat(browser.findElement(By.id("pay-status")).getText())
                .contains("retried a 400 5 times and got 400 every time", "Stagger made 1 attempt (reason NOT_RETRYABLE)");
    }

    @Test
    void jobsAgainstADeadDependencyGoDeadAndAReDriveCompletesThem() {
        browser.get(url);
        fill("jobs-form", "count", "5");
        fill("jobs-form", "failureRate", "1");
        browser.findElement(By.id("jobs-enqueue")).click();
        // 4 attempts with waits of about 0.5, 1 and 2 s (equal jitter), then DEAD
        waitUpTo(60).until(ExpectedConditions.attributeToBe(By.cssSelector("#jobs-counts [data-state=DEAD]"), "data-count", "5"));
        assertThat(browser.findElement(By.id("jobs-table")).getText()).contains("dependency answered 503");

        browser.findElement(By.id("jobs-redrive")).click();
        waitUpTo(30).until(ExpectedConditions.attributeToBe(By.cssSelector("#jobs-counts [data-state=DEAD]"), "data-count", "0"));
        waitUpTo(30).until(ExpectedConditions.attributeToBe(By.cssSelector("#jobs-counts [data-state=SUCCEEDED]"), "data-count", "5"));
    }
}
