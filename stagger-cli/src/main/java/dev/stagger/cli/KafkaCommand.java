package dev.stagger.cli;

import dev.stagger.kafka.AttemptError;
import dev.stagger.kafka.KafkaDeadLetter;
import dev.stagger.kafka.KafkaDeadLetters;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.common.KafkaException;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code stagger kafka}: operate the dead-letter topic of a KafkaRetryConsumer's work topic. */
@Command(name = "kafka", mixinStandardHelpOptions = true,
        description = "Operate a Kafka consumer's dead letters: list them with their history, re-drive, purge.",
        subcommands = {KafkaCommand.Dead.class, KafkaCommand.Redrive.class, KafkaCommand.Purge.class})
final class KafkaCommand implements Callable<Integer> {
    @SuppressWarnings("NullAway.Init") // picocli sets it before call()
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return 2;
    }

    /** Options every subcommand takes. */
    static final class Broker {
        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Option(names = "--bootstrap", defaultValue = "127.0.0.1:9092", paramLabel = "HOST:PORT[,...]",
                description = "the brokers (default: ${DEFAULT-VALUE})")
        String bootstrap;

        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Option(names = "--topic", required = true, paramLabel = "T", description = "the consumer's work topic")
        String topic;

        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Option(names = "--timeout", defaultValue = "10s", paramLabel = "D", converter = Durations.class,
                description = "how long each broker request may take (default: ${DEFAULT-VALUE})")
        Duration timeout;

        KafkaDeadLetters deadLetters() {
            if (bootstrap.isBlank() || !bootstrap.matches("[^\\s,]+:\\d+(,[^\\s,]+:\\d+)*")) {
                throw new IllegalArgumentException("--bootstrap must be HOST:PORT[,HOST:PORT...], got '"
                        + (bootstrap.length() > 64 ? bootstrap.substring(0, 64) + "..." : bootstrap) + "'");
            }
            int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
            Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, "client.id", "stagger-cli",
                    "request.timeout.ms", millis, "default.api.timeout.ms", millis, "max.block.ms", millis,
                    "delivery.timeout.ms", millis, "linger.ms", 0);
            return KafkaDeadLetters.of(config, topic).withTimeout(timeout);
        }
    }

    /** Runs a subcommand body, turning failures into messages and exit codes. */
    abstract static class Base implements Callable<Integer> {
        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Spec
        CommandLine.Model.CommandSpec spec;

        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Mixin
        Broker broker;

        abstract int run(KafkaDeadLetters dead, PrintWriter out);

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try {
                int code = run(broker.deadLetters(), out);
                out.flush();
                return code;
            } catch (IllegalArgumentException e) {
                err.println("stagger kafka: " + e.getMessage());
                return 2;
            } catch (KafkaException e) {
                err.println("stagger kafka: broker error: " + BrokerErrors.describe(e));
                return 3;
            }
        }
    }

    @Command(name = "dead", mixinStandardHelpOptions = true,
            description = "List dead letters not yet re-driven or purged, with each one's error history; they stay in the topic.")
    static final class Dead extends Base {
        @Option(names = "--limit", defaultValue = "20", description = "most records listed (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        int run(KafkaDeadLetters dead, PrintWriter out) {
            long count = dead.count();
            List<KafkaDeadLetter> letters = dead.list(limit);
            out.printf(Locale.ROOT, "%d dead letter(s) in %s%s%n", count, dead.deadLetterTopic(),
                    count > letters.size() ? ", showing the first " + letters.size() : "");
            for (KafkaDeadLetter d : letters) {
                out.printf(Locale.ROOT, "%nrecord %s (%d/%d): %s after %d attempt(s)%s%s, %s%n",
                        d.origin().orElse("(no origin)"), d.partition(), d.offset(), d.endReason().orElse("(no end reason)"),
                        d.attempts(), d.deadAt().map(t -> " at " + t).orElse(""),
                        d.redrives() > 0 ? ", re-driven " + d.redrives() + " time(s) before" : "",
                        d.valueBytes() < 0 ? "no payload" : d.valueBytes() + " bytes");
                d.cause().ifPresent(c -> out.printf(Locale.ROOT, "  cause: %s%n", c));
                for (AttemptError e : d.history()) {
                    out.printf(Locale.ROOT, "  attempt %d at %s: %s: %s%n", e.attempt(), e.failedAt(), e.exceptionClass(),
                            e.message());
                }
                if (d.historyDropped() > 0) {
                    out.printf(Locale.ROOT, "  (%d earlier entries dropped)%n", d.historyDropped());
                }
            }
            return 0;
        }
    }

    @Command(name = "redrive", mixinStandardHelpOptions = true,
            description = "Send dead letters back to the work topic with fresh attempts (their history stays); each at most once.")
    static final class Redrive extends Base {
        @Option(names = "--limit", defaultValue = "" + KafkaDeadLetters.MAX_BATCH,
                description = "most records re-driven (default: all, up to ${DEFAULT-VALUE})")
        int limit;

        @Override
        int run(KafkaDeadLetters dead, PrintWriter out) {
            out.printf(Locale.ROOT, "re-drove %d dead letter(s) to %s%n", dead.redrive(limit), dead.topic());
            return 0;
        }
    }

    @Command(name = "purge", mixinStandardHelpOptions = true, description = "Delete every dead letter of the topic.")
    static final class Purge extends Base {
        @Override
        int run(KafkaDeadLetters dead, PrintWriter out) {
            out.printf(Locale.ROOT, "purged %d dead letter(s) from %s%n", dead.purge(), dead.deadLetterTopic());
            return 0;
        }
    }
}
