package dev.stagger.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The page as a newcomer meets it in the first hour, in real headless Chromium, at desktop and
 * phone width: each test is a rough edge a first visit hit. One demo server per test, so that no
 * test sees another's breaker, budget, payments or jobs.
 */
class DemoPageFirstHourTest {
    /** Every element (HTML or SVG text) of {@code arguments[0]} that sticks out of the viewport, as "tag#id.class: text [left, right]". */
    private static final String OVERFLOWING = """
            const vw = document.documentElement.clientWidth;
            const out = [];
            for (const el of arguments[0].querySelectorAll('*')) {
              const r = el.getBoundingClientRect();
              if (r.width === 0 || getComputedStyle(el).visibility === 'hidden') continue;
              if (el.closest('details:not([open])') && el.tagName !== 'SUMMARY' && el.tagName !== 'DETAILS') continue;
              if (r.left < -0.5 || r.right > vw + 0.5) {
                out.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && el.className.baseVal === undefined && el.className ? '.' + el.className : '')
                  + ': ' + (el.textContent || '').trim().slice(0, 40) + ' [' + Math.round(r.left) + ', ' + Math.round(r.right) + ']');
              }
            }
            return out.slice(0, 20);
            """;

    /** Text of {@code arguments[0]} drawn smaller than {@code arguments[1]} px, or cut off by its SVG, as "text (size px)". */
    private static final String UNREADABLE = """
            const min = arguments[1], out = [];
            for (const el of arguments[0].querySelectorAll('*')) {
              const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
              if (!own) continue;
              const r = el.getBoundingClientRect();
              if (r.width === 0) continue;
              let size = parseFloat(getComputedStyle(el).fontSize);
              if (el instanceof SVGElement && el.getScreenCTM()) {
                const m = el.getScreenCTM();
                size *= Math.sqrt(m.a * m.a + m.b * m.b);
                const box = el.ownerSVGElement.getBoundingClientRect();
                if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.push(el.textContent.trim() + ' (cut off)');
              }
              if (size < min - 0.1) out.push(el.textContent.trim().slice(0, 40) + ' (' + size.toFixed(1) + ' px)');
            }
            return out.slice(0, 20);
            """;

    @TempDir
    Path data;
    DemoServer server;
    static ChromeDriver browser;
    String url;

    @BeforeAll
    static void startBrowser() throws Exception {
        browser = Browser.start();
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    @BeforeEach
    void startServer() throws Exception {
        server = DemoServer.start("127.0.0.1", 0, data);
        url = "http://127.0.0.1:" + server.port() + "/";
        browser.manage().window().setSize(new Dimension(1200, 1800));
    }

    @AfterEach
    void stopServer() throws Exception {
        server.close();
    }

    private WebDriverWait waitUpTo(int seconds) {
        return Browser.waitUpTo(browser, seconds);
    }

    private void fill(String form, String name, String value) {
        Browser.fill(browser, form, name, value);
    }

    private void click(String id) {
        WebElement button = browser.findElement(By.id(id));
        browser.executeScript("arguments[0].scrollIntoView({block: 'center'})", button);
        button.click();
    }

    private void setSwitch(String form, String name, boolean on) {
        WebElement box = browser.findElement(By.cssSelector("#" + form + " [name=" + name + "]"));
        browser.executeScript("arguments[0].scrollIntoView({block: 'center'})", box);
        if (box.isSelected() != on) {
            box.click();
        }
    }

    private String text(String id) {
        return browser.findElement(By.id(id)).getText();
    }

    private void send(String script) {
        fill("send-form", "script", script);
        fill("send-form", "baseMs", "20");
        fill("send-form", "attemptTimeoutMs", "20000");
        click("send-button");
        waitUpTo(30).until(ExpectedConditions.attributeToBeNotEmpty(browser.findElement(By.id("send-status")), "data-reason"));
    }

    // ---- the page at 390 px ----

    @Test
    void atPhoneWidthNothingOverflowsAfterUsingEveryPanelAndTheTimelineStaysReadable() throws Exception {
        browser.manage().window().setSize(new Dimension(390, 844));
        browser.get(url);
        send("503,429:1,200");
        fill("herd-form", "clients", "20");
        fill("herd-form", "runs", "1");
        click("herd-button");
        waitUpTo(90).until(ExpectedConditions.numberOfElementsToBeMoreThan(By.cssSelector("#herd-charts svg"), 2));
        fill("hammer-form", "calls", "60");
        click("hammer-button");
        waitUpTo(60).until(ExpectedConditions.attributeToBeNotEmpty(browser.findElement(By.id("hammer-status")), "data-reasons"));
        browser.findElement(By.cssSelector("#breaker details summary")).click();
        click("pay-nokey");
        waitUpTo(30).until(ExpectedConditions.attributeToBe(By.id("pay-status"), "data-charges", "2"));
        click("pay-key");
        waitUpTo(30).until(ExpectedConditions.attributeToBe(By.id("pay-status"), "data-charges", "1"));
        browser.findElement(By.cssSelector("#calc-form button")).click();
        waitUpTo(10).until(d -> !text("calc-result").isBlank());
        fill("jobs-form", "count", "3");
        fill("jobs-form", "failureRate", "0");
        click("jobs-enqueue");
        waitUpTo(30).until(ExpectedConditions.attributeToBe(By.cssSelector("#jobs-counts [data-state=SUCCEEDED]"), "data-count", "3"));
        // 6: the store down (stale prices, a queued order, the account's message), then back and the order placed
        waitUpTo(20).until(ExpectedConditions.attributeToBe(By.id("store-prices-box"), "data-stale", "false"));
        click("store-down");
        waitUpTo(10).until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#store-state [data-down=true]")));
        click("store-prices");
        waitUpTo(20).until(ExpectedConditions.attributeToBe(By.id("store-prices-box"), "data-stale", "true"));
        click("store-order");
        waitUpTo(20).until(ExpectedConditions.attributeToBe(By.id("store-order-status"), "data-deferred", "true"));
        String order = browser.findElement(By.id("store-order-status")).getAttribute("data-order");
        click("store-account");
        waitUpTo(20).until(ExpectedConditions.textToBePresentInElementLocated(By.id("store-message"), "try again in"));
        click("store-up");
        waitUpTo(60).until(ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("#store-orders tr[data-order='" + order + "'][data-state=SUCCEEDED]")));
        // 7: the metastable scenario with every switch on, the longest set-up name in the legend
        new Select(browser.findElement(By.cssSelector("#meta-form [name=retries]"))).selectByValue("defaults");
        setSwitch("meta-form", "budget", true);
        setSwitch("meta-form", "throttle", true);
        setSwitch("meta-form", "shedding", true);
        fill("meta-form", "seconds", "25");
        click("meta-button");
        waitUpTo(120).until(ExpectedConditions.attributeToBe(By.id("meta-status"), "data-played", "true"));
        assertThat(browser.findElement(By.id("meta-status")).getAttribute("data-setup")).isEqualTo("defaults+budget+throttle+shedding");
        assertThat(browser.findElements(By.cssSelector("#meta-legend li"))).hasSize(1);
        assertThat(text("meta-legend")).startsWith("defaults+budget+throttle+shedding: ");

        // a test artifact: the whole used page at phone width (the window as tall as the page)
        long height = (Long) browser.executeScript("return document.documentElement.scrollHeight");
        browser.manage().window().setSize(new Dimension(390, (int) Math.min(height, 12_000)));
        Files.createDirectories(Path.of("target"));
        Files.write(Path.of("target", "demo-phone.png"), browser.getScreenshotAs(OutputType.BYTES));
        Object width = browser.executeScript("return document.documentElement.scrollWidth");
        assertThat((List<?>) browser.executeScript(OVERFLOWING, browser.findElement(By.tagName("body"))))
                .as("elements beyond the 390 px viewport (document %s px wide)", width).isEmpty();
        assertThat(((Number) width).intValue()).isLessThanOrEqualTo(390);
        assertThat((List<?>) browser.executeScript(UNREADABLE, browser.findElement(By.id("timeline")), 11))
                .as("timeline text smaller than 11 px or cut off").isEmpty();
        assertThat((List<?>) browser.executeScript(UNREADABLE, browser.findElement(By.id("meta-chart")), 11))
                .as("metastable chart text smaller than 11 px or cut off").isEmpty();
    }

    // ---- 1. send ----

    @Test
    void aWaitSetByRetryAfterSaysRetryAfterSetTheMinimumAndIsNotCutOff() {
        browser.get(url);
        send("429:1,200");
        WebElement wait = browser.findElement(By.cssSelector("#timeline .wait-label"));
        assertThat(wait.getText()).contains("Retry-After", "minimum").doesNotContainPattern("slept [\\d,.]+ ms of [\\d,.]+ ms backoff");
        assertThat((List<?>) browser.executeScript(UNREADABLE, browser.findElement(By.id("timeline")), 11)).isEmpty();
    }

    @Test
    void thePageExplainsTheScriptSyntax() {
        browser.get(url);
        assertThat(text("send")).contains("429:1", "Retry-After: 1");
    }

    // ---- 2. thundering herd ----

    @Test
    void eachStrategyHasOneColourInEveryHerdChartAndTheChartsHaveAxesWithUnits() {
        browser.get(url);
        fill("herd-form", "clients", "20");
        fill("herd-form", "runs", "1");
        click("herd-button");
        waitUpTo(90).until(ExpectedConditions.numberOfElementsToBeMoreThan(By.cssSelector("#herd-charts svg"), 2));

        Map<String, String> colourOf = new HashMap<>();
        Map<String, String> strategyOf = new HashMap<>();
        for (WebElement mark : browser.findElements(By.cssSelector("#herd-charts [data-strategy]"))) {
            String strategy = mark.getAttribute("data-strategy");
            String colour = (String) browser.executeScript("""
                    const s = getComputedStyle(arguments[0]);
                    return arguments[0].tagName === 'polyline' || arguments[0].tagName === 'line' ? s.stroke : s.fill;""", mark);
            assertThat(colourOf.putIfAbsent(strategy, colour)).as("colour of %s", strategy).isIn(null, colour);
            assertThat(strategyOf.putIfAbsent(colour, strategy)).as("strategy drawn in %s", colour).isIn(null, strategy);
        }
        assertThat(colourOf).containsKeys("none", "exponential", "full-jitter");
        for (WebElement chart : browser.findElements(By.cssSelector("#herd-charts svg"))) {
            assertThat(chart.findElements(By.cssSelector(".tick"))).as(chart.getAttribute("aria-label")).hasSizeGreaterThanOrEqualTo(3);
            assertThat(chart.findElements(By.cssSelector(".axis-title"))).extracting(WebElement::getText)
                    .anyMatch(t -> t.matches(".*\\((ms|s|calls|requests/s)\\).*"));
        }
        assertThat((List<?>) browser.executeScript(UNREADABLE, browser.findElement(By.id("herd-charts")), 11)).isEmpty();
    }

    @Test
    void theLargestSimulationShowsItsProgress() {
        browser.get(url);
        fill("herd-form", "clients", "500");
        fill("herd-form", "runs", "50");
        click("herd-button");
        Pattern progress = Pattern.compile("(\\d+) of (\\d+) runs");
        String seen = waitUpTo(60).until(d -> {
            Matcher m = progress.matcher(text("herd-status"));
            return m.find() && Integer.parseInt(m.group(1)) > 0 && Integer.parseInt(m.group(1)) < Integer.parseInt(m.group(2))
                    ? m.group() : null;
        });
        assertThat(seen).isNotNull();
        waitUpTo(300).until(ExpectedConditions.numberOfElementsToBeMoreThan(By.cssSelector("#herd-charts svg"), 2));
        assertThat(text("herd-status")).contains("500 clients");
    }

    // ---- 3. breaker and budget ----

    @Test
    void theBudgetButtonShowsTheBudgetRefusingRetriesAndSaysWhatHappened() {
        browser.get(url);
        click("budget-button");
        waitUpTo(90).until(ExpectedConditions.attributeToBeNotEmpty(browser.findElement(By.id("hammer-status")), "data-reasons"));
        assertThat(browser.findElement(By.id("hammer-status")).getAttribute("data-reasons")).contains("BUDGET");
        Matcher refused = Pattern.compile("budget refused (\\d+) retr").matcher(text("hammer-status"));
        assertThat(refused.find()).as(text("hammer-status")).isTrue();
        assertThat(Integer.parseInt(refused.group(1))).isPositive();
        assertThat(text("hammer-status")).contains("breaker stayed CLOSED");
        waitUpTo(10).until(d -> !text("breaker-state").contains("budget refusals 0"));
    }

    // ---- 4. pay twice? ----

    @Test
    void eachPaymentShowsItsOwnChargesAlsoInTheReplayedBody() {
        browser.get(url);
        click("pay-nokey");
        waitUpTo(30).until(ExpectedConditions.attributeToBe(By.id("pay-status"), "data-charges", "2"));
        click("pay-key");
        waitUpTo(30).until(ExpectedConditions.attributeToBe(By.id("pay-status"), "data-charges", "1"));
        assertThat(text("pay-table")).contains("replayed").contains("\"charges\":1").doesNotContain("\"charges\":2");
        click("pay-key");
        waitUpTo(30).until(ExpectedConditions.textToBePresentInElementLocated(By.id("pay-table"), "replayed"));
        assertThat(text("pay-table")).contains("\"charges\":1").doesNotContain("\"charges\":3").doesNotContain("\"charge\":");
    }

    @Test
    void howLongCouldRetriesHoldACallIsComputedExactly() {
        browser.get(url);
        fill("calc-form", "retries", "60");
        fill("calc-form", "baseMs", "1");
        fill("calc-form", "capMs", "1");
        browser.findElement(By.cssSelector("#calc-form button")).click();
        waitUpTo(10).until(d -> text("calc-result").contains("without"));
        // 1 ms + 2 ms + ... + 2^59 ms = 2^60 - 1 ms
        double years = new BigInteger("2").pow(60).subtract(BigInteger.ONE).doubleValue() / 1000 / (365.25 * 86400);
        assertThat(text("calc-result")).contains(String.format(java.util.Locale.ROOT, "%.1f million years", years / 1e6))
                .contains("60 ms with the cap");

        fill("calc-form", "retries", "100000");
        browser.findElement(By.cssSelector("#calc-form button")).click();
        waitUpTo(10).until(d -> text("calc-result").contains("100,000 retries"));
        assertThat(text("calc-result")).contains("more than the age of the universe").doesNotContain("e+");
    }

    // ---- 5. jobs ----

    @Test
    void jobsShowTheAttemptLimitNoNextRunWhenFinishedAndTheirHistoryAfterARedrive() {
        browser.get(url);
        fill("jobs-form", "count", "2");
        fill("jobs-form", "failureRate", "1");
        click("jobs-enqueue");
        waitUpTo(60).until(ExpectedConditions.attributeToBe(By.cssSelector("#jobs-counts [data-state=DEAD]"), "data-count", "2"));
        assertThat(text("jobs-table")).contains("4 of 4");
        click("jobs-redrive");
        waitUpTo(60).until(ExpectedConditions.attributeToBe(By.cssSelector("#jobs-counts [data-state=SUCCEEDED]"), "data-count", "2"));
        waitUpTo(5).until(d -> text("jobs-table").contains("re-driven"));
        for (WebElement row : browser.findElements(By.cssSelector("#jobs-table tr[data-state=SUCCEEDED]"))) {
            assertThat(row.getText()).contains("4 failed", "re-driven", "1 of 4").doesNotContain("next");
            assertThat(row.findElement(By.cssSelector("[data-col=next]")).getText()).isIn("", "—");
        }
    }

    @Test
    void theBrowserFindsAFaviconAndLogsNoErrors() {
        browser.get("about:blank");
        browser.manage().logs().get(LogType.BROWSER); // reading empties the log: earlier pages' messages go
        browser.get(url);
        waitUpTo(10).until(d -> !text("jobs-counts").isBlank());
        Object status = browser.executeAsyncScript("""
                const done = arguments[arguments.length - 1];
                const icon = document.querySelector('link[rel~=icon]');
                Promise.all([fetch('/favicon.ico'), fetch(icon ? icon.href : '/none')]).then(rs => done(rs.map(r => r.status)));""");
        assertThat(((List<?>) status).stream().map(String::valueOf).toList()).containsExactly("200", "200");
        List<LogEntry> errors = browser.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue()).toList();
        assertThat(errors).extracting(LogEntry::getMessage).isEmpty();
    }
}
