package dev.stagger.cli.demo;

import dev.stagger.testsupport.Services;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Real headless Chromium through the system chromedriver (Debian packages {@code chromium} and
 * {@code chromium-driver}). Absent: the test is skipped with a message, except under CI=true.
 */
final class Browser {
    private static final Path CHROMIUM = Path.of(System.getenv().getOrDefault("STAGGER_CHROMIUM", "/usr/bin/chromium"));
    private static final Path DRIVER = Path.of(System.getenv().getOrDefault("STAGGER_CHROMEDRIVER", "/usr/bin/chromedriver"));

    private Browser() {
    }

    static ChromeDriver start() throws Exception {
        boolean present = Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER);
        String message = "Chromium not found at " + CHROMIUM + " / " + DRIVER
                + " (install the Debian packages chromium and chromium-driver)";
        Services.require("Chromium", present, message);
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1200,1800",
                "--user-data-dir=" + Files.createTempDirectory("stagger-chromium"));
        options.setCapability("goog:loggingPrefs", Map.of("browser", "ALL")); // the page's console, for tests that read it
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
                .usingAnyFreePort().build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(30));
        return driver;
    }

    /** Waits for a condition; elements the page re-renders while polling are looked up again. */
    static WebDriverWait waitUpTo(ChromeDriver browser, int seconds) {
        WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(seconds));
        wait.ignoring(StaleElementReferenceException.class);
        return wait;
    }

    /** Types {@code value} into the field {@code name} of the form {@code form}. */
    static void fill(ChromeDriver browser, String form, String name, String value) {
        WebElement input = browser.findElement(By.cssSelector("#" + form + " [name=" + name + "]"));
        input.clear();
        input.sendKeys(value);
    }
}
