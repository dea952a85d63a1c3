package dev.stagger.cli.demo;

import java.nio.file.Path;
import org.openqa.selenium.chrome.ChromeDriver;

/** The demo on a free loopback port and a headless Chromium to look at it: what a page test class starts once. */
final class DemoPage implements AutoCloseable {
    private final DemoServer server;
    final ChromeDriver browser;
    /** The page's address, {@code http://127.0.0.1:PORT/}. */
    final String url;

    private DemoPage(DemoServer server, ChromeDriver browser) {
        this.server = server;
        this.browser = browser;
        this.url = "http://127.0.0.1:" + server.port() + "/";
    }

    /** Skips (or, under CI=true, fails) like {@link Browser#start()} where Chromium is absent, leaving no server behind. */
    static DemoPage start(Path data) throws Exception {
        DemoServer server = DemoServer.start("127.0.0.1", 0, data);
        try {
            return new DemoPage(server, Browser.start());
        } catch (Throwable t) {
            server.close();
            throw t;
        }
    }

    @Override
    public void close() throws Exception {
        try {
            browser.quit();
        } finally { // a browser that fails to quit must not leave the server running
            server.close();
        }
    }
}
