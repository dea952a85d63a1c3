package dev.stagger.sim;

import java.util.List;
import java.util.Locale;

/**
 * Renders simulation results as a self-contained SVG document (no scripts, no external fonts or
 * styles) that opens in any browser: load over time per strategy for {@code outage}, total calls
 * and completion time per strategy for {@code contention}, goodput over time per client set-up for
 * {@code metastable}, attempts at the bottom per request for {@code layers}.
 */
public final class SvgChart {
    private static final String[] COLORS = {
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"
    };
    /** Width of the plot area; the chart is as wide as the plot plus the margins its legend needs. */
    private static final int PLOT_WIDTH = 600;
    private static final int HEIGHT = 480;
    private static final int LEFT = 80;
    private static final int MIN_RIGHT = 220;
    /** Generous width of one character of 11 px sans-serif, so that no legend is cut off. */
    private static final double CHAR_WIDTH = 6.8;
    private static final int TOP = 50;
    private static final int BOTTOM = 60;

    private SvgChart() {
    }

    /** The chart that suits the results' scenario. */
    public static String render(String title, List<SimulationResult> results) {
        if (results.isEmpty()) {
            throw new IllegalArgumentException("results must not be empty");
        }
        return "outage".equals(results.get(0).scenario()) ? loadOverTime(title, results) : callsPerStrategy(title, results);
    }

    /**
     * One line per result: load (requests per second, per 100 ms bucket) against time, with the
     * offered rate dashed and the outage window shaded.
     */
    public static String loadOverTime(String title, List<SimulationResult> results) {
        double maxLoad = 1;
        int buckets = 1;
        for (SimulationResult r : results) {
            for (double v : r.load()) {
                maxLoad = Math.max(maxLoad, v);
            }
            maxLoad = Math.max(maxLoad, r.offeredRate());
            buckets = Math.max(buckets, r.load().size());
        }
        maxLoad = niceCeiling(maxLoad);
        double seconds = buckets * SimulationResult.BUCKET_MS / 1000.0;
        List<String> legends = results.stream().map(r -> r.label() + format(" (peak %.0f/s)", r.peakLoad())).toList();
        int width = width(legends);
        StringBuilder svg = open(title, width);
        double plotW = PLOT_WIDTH;
        double plotH = HEIGHT - TOP - BOTTOM;
        SimulationResult first = results.get(0);
        if (first.downToMs() > first.downFromMs()) {
            double x0 = LEFT + plotW * first.downFromMs() / 1000.0 / seconds;
            double x1 = LEFT + plotW * Math.min(seconds, first.downToMs() / 1000.0) / seconds;
            svg.append(format("<rect x='%.1f' y='%d' width='%.1f' height='%.1f' fill='#fbe3e3'/>%n", x0, TOP, x1 - x0, plotH));
            svg.append(format("<text x='%.1f' y='%d' font-size='11' fill='#a33'>server down</text>%n", x0 + 4, TOP + 14));
        }
        axes(svg, maxLoad, "requests / s (100 ms buckets)");
        for (int t = 0; t <= (int) Math.floor(seconds); t += Math.max(1, (int) Math.ceil(seconds / 10))) {
            double x = LEFT + plotW * t / seconds;
            svg.append(format("<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%ds</text>%n", x, HEIGHT - BOTTOM + 16, t));
        }
        svg.append(format("<text x='%.1f' y='%d' font-size='12' text-anchor='middle'>time</text>%n", LEFT + plotW / 2, HEIGHT - 18));
        if (first.offeredRate() > 0) {
            double y = TOP + plotH * (1 - first.offeredRate() / maxLoad);
            svg.append(format("<line x1='%d' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#444' stroke-dasharray='6 4'/>%n", LEFT, y, LEFT + plotW, y));
            svg.append(format("<text x='%.1f' y='%.1f' font-size='11' fill='#444' text-anchor='end'>offered</text>%n", LEFT + plotW - 4, y - 4));
        }
        for (int i = 0; i < results.size(); i++) {
            SimulationResult r = results.get(i);
            StringBuilder points = new StringBuilder();
            for (int b = 0; b < r.load().size(); b++) {
                double x = LEFT + plotW * (b + 0.5) / buckets;
                double y = TOP + plotH * (1 - r.load().get(b) / maxLoad);
                points.append(format("%.1f,%.1f ", x, y));
            }
            svg.append(format("<polyline fill='none' stroke='%s' stroke-width='1.5' points='%s'/>%n", color(i), points.toString().trim()));
            legend(svg, i, legends.get(i));
        }
        return close(svg);
    }

    /**
     * The {@code metastable} scenario: one line per client set-up, goodput (calls that succeeded
     * per second) against time, with the trigger shaded and the full and reduced capacities dashed.
     */
    public static String goodputOverTime(String title, List<MetastableResult> results) {
        if (results.isEmpty()) {
            throw new IllegalArgumentException("results must not be empty");
        }
        MetastableResult first = results.get(0);
        double max = first.capacity();
        int seconds = 1;
        for (MetastableResult r : results) {
            for (int v : r.goodput()) {
                max = Math.max(max, v);
            }
            seconds = Math.max(seconds, r.goodput().size());
        }
        max = niceCeiling(max);
        List<String> legends = results.stream().map(r -> r.setup().label() + ": recovered "
                + r.timeToRecover().map(d -> format("after %d s", d.toSeconds())).orElse("never")).toList();
        StringBuilder svg = open(title, width(legends));
        double plotW = PLOT_WIDTH;
        double plotH = HEIGHT - TOP - BOTTOM;
        double x0 = LEFT + plotW * first.triggerFromSecond() / seconds;
        double x1 = LEFT + plotW * Math.min(seconds, first.triggerToSecond()) / seconds;
        svg.append(format("<rect x='%.1f' y='%d' width='%.1f' height='%.1f' fill='#fbe3e3'/>%n", x0, TOP, x1 - x0, plotH));
        svg.append(format("<text x='%.1f' y='%d' font-size='11' fill='#a33'>capacity halved</text>%n", x0 + 4, TOP + 14));
        axes(svg, max, "goodput: calls succeeded / s");
        for (int t = 0; t <= seconds; t += Math.max(1, (int) Math.ceil(seconds / 10.0))) {
            double x = LEFT + plotW * t / seconds;
            svg.append(format("<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%ds</text>%n", x, HEIGHT - BOTTOM + 16, t));
        }
        svg.append(format("<text x='%.1f' y='%d' font-size='12' text-anchor='middle'>time</text>%n", LEFT + plotW / 2, HEIGHT - 18));
        for (double level : new double[] {first.capacity(), first.reducedCapacity()}) {
            double y = TOP + plotH * (1 - level / max);
            svg.append(format("<line x1='%d' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#444' stroke-dasharray='6 4'/>%n", LEFT, y, LEFT + plotW, y));
            svg.append(format("<text x='%.1f' y='%.1f' font-size='11' fill='#444' text-anchor='end'>%s %.0f/s</text>%n",
                    LEFT + plotW - 4, y - 4, level == first.capacity() ? "capacity" : "reduced", level));
        }
        for (int i = 0; i < results.size(); i++) {
            List<Integer> goodput = results.get(i).goodput();
            StringBuilder points = new StringBuilder();
            for (int b = 0; b < goodput.size(); b++) {
                double x = LEFT + plotW * (b + 0.5) / seconds;
                double y = TOP + plotH * (1 - goodput.get(b) / max);
                points.append(format("%.1f,%.1f ", x, y));
            }
            svg.append(format("<polyline fill='none' stroke='%s' stroke-width='1.5' points='%s'/>%n", color(i), points.toString().trim()));
            legend(svg, i, legends.get(i));
        }
        return close(svg);
    }

    /** Two bars per result: mean total calls, and mean time until every client finished. */
    public static String callsPerStrategy(String title, List<SimulationResult> results) {
        double maxCalls = 1;
        double maxTime = 1;
        for (SimulationResult r : results) {
            maxCalls = Math.max(maxCalls, r.calls());
            maxTime = Math.max(maxTime, r.completionMs());
        }
        maxCalls = niceCeiling(maxCalls);
        maxTime = niceCeiling(maxTime);
        int width = width(results.stream().map(SimulationResult::label).toList());
        StringBuilder svg = open(title, width);
        double plotW = PLOT_WIDTH;
        double plotH = HEIGHT - TOP - BOTTOM;
        axes(svg, maxCalls, "calls (mean per run)");
        svg.append(format("<text x='%.1f' y='%d' font-size='11' text-anchor='start'>light bars: 0 to %s</text>%n",
                LEFT + plotW + 8, TOP - 8, millis(maxTime)));
        double slot = plotW / results.size();
        double bar = Math.min(40, slot * 0.35);
        for (int i = 0; i < results.size(); i++) {
            SimulationResult r = results.get(i);
            double x = LEFT + slot * i + slot / 2;
            double h = plotH * r.calls() / maxCalls;
            svg.append(format("<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>%s: %.0f calls</title></rect>%n",
                    x - bar, TOP + plotH - h, bar, h, color(i), escape(r.label()), r.calls()));
            svg.append(format("<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>%.0f</text>%n", x - bar / 2, TOP + plotH - h - 3, r.calls()));
            double th = plotH * r.completionMs() / maxTime;
            svg.append(format("<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s' fill-opacity='0.35' stroke='%s'><title>%s: %s until all finished</title></rect>%n",
                    x, TOP + plotH - th, bar, th, color(i), color(i), escape(r.label()), millis(r.completionMs())));
            svg.append(format("<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>%s</text>%n", x + bar / 2, TOP + plotH - th - 3, millis(r.completionMs())));
            svg.append(format("<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%s</text>%n", x, HEIGHT - BOTTOM + 16, escape(r.label())));
            legend(svg, i, r.label());
        }
        svg.append(format("<text x='%.1f' y='%d' font-size='12' text-anchor='middle'>solid: calls (left axis) · light: time until every client finished</text>%n",
                LEFT + plotW / 2, HEIGHT - 18));
        return close(svg);
    }

    /**
     * One bar per {@code layers} set-up: attempts that reached the bottom per request that met the
     * failure, the part that arrived after the user stopped waiting drawn light on top; dashed,
     * {@code attempts^tiers} (every tier retrying) and {@code attempts} (one layer retrying).
     */
    public static String attemptsPerLayer(String title, List<LayersResult> results) {
        if (results.isEmpty()) {
            throw new IllegalArgumentException("results must not be empty");
        }
        LayersResult first = results.get(0);
        double fanOut = Math.pow(first.attempts(), first.tiers());
        double max = fanOut;
        for (LayersResult r : results) {
            max = Math.max(max, r.bottomAttemptsPerRequest());
        }
        max = niceCeiling(max);
        List<String> legends = results.stream().map(r -> r.setup().label() + format(": %.1f per request, %.1f late, %.0f %% ok, p99 %s",
                r.bottomAttemptsPerRequest(), r.lateAttemptsPerRequest(), 100 * r.successShare(), millis(r.p99LatencyMs()))).toList();
        int width = width(legends);
        StringBuilder svg = open(title, width);
        double plotW = PLOT_WIDTH;
        double plotH = HEIGHT - TOP - BOTTOM;
        axes(svg, max, "attempts at the bottom per request");
        double[] marks = {fanOut, first.attempts()};
        String[] names = {format("every tier retries: %d^%d = %.0f", first.attempts(), first.tiers(), fanOut),
            format("one layer retries: %d", first.attempts())};
        for (int m = 0; m < marks.length; m++) {
            double y = TOP + plotH * (1 - marks[m] / max);
            svg.append(format("<line x1='%d' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#555' stroke-dasharray='6 4'/>%n",
                    LEFT, y, LEFT + plotW, y));
            svg.append(format("<text x='%.1f' y='%.1f' font-size='11' text-anchor='end' fill='#555'>%s</text>%n",
                    LEFT + plotW - 4, y - 4, escape(names[m])));
        }
        double slot = plotW / results.size();
        double bar = Math.min(60, slot * 0.5);
        for (int i = 0; i < results.size(); i++) {
            LayersResult r = results.get(i);
            double x = LEFT + slot * i + slot / 2 - bar / 2;
            double onTime = r.bottomAttemptsPerRequest() - r.lateAttemptsPerRequest();
            double h = plotH * onTime / max;
            double lh = plotH * r.lateAttemptsPerRequest() / max;
            svg.append(format("<rect class='on-time' x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>%s: %.1f attempts per request while the user waited</title></rect>%n",
                    x, TOP + plotH - h, bar, h, color(i), escape(r.setup().label()), onTime));
            svg.append(format("<rect class='late' x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s' fill-opacity='0.35' stroke='%s'><title>%s: %.1f attempts per request after the user gave up</title></rect>%n",
                    x, TOP + plotH - h - lh, bar, lh, color(i), color(i), escape(r.setup().label()), r.lateAttemptsPerRequest()));
            svg.append(format("<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>%.1f</text>%n",
                    x + bar / 2, TOP + plotH - h - lh - 3, r.bottomAttemptsPerRequest()));
            svg.append(format("<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%s</text>%n",
                    x + bar / 2, HEIGHT - BOTTOM + 16, escape(r.setup().label())));
            legend(svg, i, legends.get(i));
        }
        svg.append(format("<text x='%.1f' y='%d' font-size='12' text-anchor='middle'>solid: while the user waited · light: after the user gave up (%d ms)</text>%n",
                LEFT + plotW / 2, HEIGHT - 18, first.userTimeoutMs()));
        return close(svg);
    }

    /** The chart's width: the plot, and a right margin wide enough for the longest legend entry. */
    /**
     * The {@code tail} scenario: one bar per set-up and load, as tall as its p99 latency, a lighter
     * extension up to its p999 and a tick at its p50; the extra load written above each bar. The
     * normal runs on the left, the overloaded ones on the right. Colours follow the set-up.
     */
    public static String tailLatency(String title, List<TailResult> results) {
        if (results.isEmpty()) {
            throw new IllegalArgumentException("results must not be empty");
        }
        List<TailSetup> setups = results.stream().map(TailResult::setup).distinct().toList();
        double max = 0;
        for (TailResult r : results) {
            max = Math.max(max, r.p999Ms());
        }
        max = niceCeiling(Math.max(1, max));
        List<String> legends = results.stream().map(r -> r.setup().label() + " (" + r.loadLabel() + format("): p50 %s, p99 %s, p999 %s, +%.1f %%",
                millis(r.p50Ms()), millis(r.p99Ms()), millis(r.p999Ms()), 100 * r.extraLoad())).toList();
        int width = width(legends);
        StringBuilder svg = open(title, width);
        double plotW = PLOT_WIDTH;
        double plotH = HEIGHT - TOP - BOTTOM;
        axes(svg, max, "latency (ms)");
        double slot = plotW / (results.size() + 1); // one slot's gap between the loads
        double bar = Math.min(40, slot * 0.6);
        for (int i = 0; i < results.size(); i++) {
            TailResult r = results.get(i);
            int c = setups.indexOf(r.setup());
            double x = LEFT + slot * (i + (r.overloaded() ? 1 : 0)) + slot / 2 - bar / 2;
            double h99 = plotH * r.p99Ms() / max;
            double h999 = plotH * r.p999Ms() / max;
            double y50 = TOP + plotH * (1 - r.p50Ms() / max);
            svg.append(format("<rect class='p999' x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s' fill-opacity='0.3'><title>%s, %s: p999 %.1f ms</title></rect>%n",
                    x, TOP + plotH - h999, bar, h999, color(c), escape(r.setup().label()), r.loadLabel(), r.p999Ms()));
            svg.append(format("<rect class='p99' x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>%s, %s: p99 %.1f ms</title></rect>%n",
                    x, TOP + plotH - h99, bar, h99, color(c), escape(r.setup().label()), r.loadLabel(), r.p99Ms()));
            svg.append(format("<line class='p50' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#000' stroke-width='2'><title>%s, %s: p50 %.1f ms</title></line>%n",
                    x - 3, y50, x + bar + 3, y50, escape(r.setup().label()), r.loadLabel(), r.p50Ms()));
            svg.append(format("<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>+%.0f%%</text>%n",
                    x + bar / 2, TOP + plotH - Math.max(h99, h999) - 3, 100 * r.extraLoad()));
            legend(svg, i, legends.get(i));
        }
        long normal = results.stream().filter(r -> !r.overloaded()).count();
        svg.append(format("<text x='%.1f' y='%d' font-size='12' text-anchor='middle'>normal load</text>%n",
                LEFT + slot * normal / 2, HEIGHT - BOTTOM + 16));
        svg.append(format("<text x='%.1f' y='%d' font-size='12' text-anchor='middle'>overload</text>%n",
                LEFT + slot * (normal + 1 + (results.size() - normal) / 2.0), HEIGHT - BOTTOM + 16));
        svg.append(format("<text x='%.1f' y='%d' font-size='12' text-anchor='middle'>bar: p99 · light: up to p999 · tick: p50 · above: extra requests</text>%n",
                LEFT + plotW / 2, HEIGHT - 18));
        return close(svg);
    }

    private static int width(List<String> legends) {
        int longest = legends.stream().mapToInt(String::length).max().orElse(0);
        int right = Math.max(MIN_RIGHT, 16 + 18 + (int) Math.ceil(longest * CHAR_WIDTH) + 12);
        return LEFT + PLOT_WIDTH + right;
    }

    private static StringBuilder open(String title, int width) {
        StringBuilder svg = new StringBuilder(16_384);
        svg.append("<?xml version='1.0' encoding='UTF-8'?>\n");
        svg.append(format("<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' viewBox='0 0 %d %d' font-family='sans-serif'>%n",
                width, HEIGHT, width, HEIGHT));
        svg.append(format("<title>%s</title>%n", escape(title)));
        svg.append(format("<rect width='%d' height='%d' fill='white'/>%n", width, HEIGHT));
        svg.append(format("<text x='%d' y='28' font-size='16' font-weight='bold'>%s</text>%n", LEFT, escape(title)));
        return svg;
    }

    private static String close(StringBuilder svg) {
        return svg.append("</svg>\n").toString();
    }

    private static void axes(StringBuilder svg, double max, String label) {
        double plotW = PLOT_WIDTH;
        double plotH = HEIGHT - TOP - BOTTOM;
        for (int i = 0; i <= 5; i++) {
            double y = TOP + plotH * (1 - i / 5.0);
            svg.append(format("<line x1='%d' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#e5e5e5'/>%n", LEFT, y, LEFT + plotW, y));
            svg.append(format("<text x='%d' y='%.1f' font-size='11' text-anchor='end'>%s</text>%n", LEFT - 6, y + 4, compact(max * i / 5)));
        }
        svg.append(format("<line x1='%d' y1='%d' x2='%d' y2='%.1f' stroke='#333'/>%n", LEFT, TOP, LEFT, TOP + plotH));
        svg.append(format("<line x1='%d' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#333'/>%n", LEFT, TOP + plotH, LEFT + plotW, TOP + plotH));
        svg.append(format("<text transform='translate(18 %.1f) rotate(-90)' font-size='12' text-anchor='middle'>%s</text>%n",
                TOP + plotH / 2, escape(label)));
    }

    private static void legend(StringBuilder svg, int i, String text) {
        int x = LEFT + PLOT_WIDTH + 16;
        int y = TOP + 20 + i * 18;
        svg.append(format("<rect x='%d' y='%d' width='12' height='12' fill='%s'/>%n", x, y - 10, color(i)));
        svg.append(format("<text x='%d' y='%d' font-size='11'>%s</text>%n", x + 18, y, escape(text)));
    }

    private static String color(int i) {
        return COLORS[i % COLORS.length];
    }

    /** 1, 2 or 5 times a power of ten, at least {@code v}. */
    static double niceCeiling(double v) {
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static String compact(double v) {
        return v >= 10_000 ? format("%.0fk", v / 1000) : format("%.0f", v);
    }

    private static String millis(double ms) {
        return ms >= 10_000 ? format("%.1f s", ms / 1000) : format("%.0f ms", ms);
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&apos;").replace("\"", "&quot;");
    }

    private static String format(String pattern, Object... args) {
        return String.format(Locale.ROOT, pattern, args);
    }
}
