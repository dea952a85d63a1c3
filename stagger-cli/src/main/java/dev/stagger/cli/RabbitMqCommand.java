package dev.stagger.cli;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.stagger.rabbitmq.DeadLetter;
import dev.stagger.rabbitmq.DeadLetters;
import dev.stagger.rabbitmq.MessageError;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code stagger rabbitmq}: operate the dead-letter queue of a RabbitConsumer's work queue. */
@Command(name = "rabbitmq", mixinStandardHelpOptions = true,
        description = "Operate a RabbitMQ consumer's dead letters: list them with their history, re-drive, purge.",
        subcommands = {RabbitMqCommand.Dead.class, RabbitMqCommand.Redrive.class, RabbitMqCommand.Purge.class})
final class RabbitMqCommand implements Callable<Integer> {
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
        @Option(names = "--uri", defaultValue = "amqp://guest:guest@127.0.0.1:5672", paramLabel = "URI",
                description = "the broker (default: ${DEFAULT-VALUE})")
        String uri;

        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Option(names = "--queue", required = true, paramLabel = "Q", description = "the consumer's work queue")
        String queue;

        @SuppressWarnings("NullAway.Init") // picocli sets it before call()
        @Option(names = "--timeout", defaultValue = "10s", paramLabel = "D", converter = Durations.class,
                description = "connection timeout (default: ${DEFAULT-VALUE})")
        Duration timeout;

        Connection connect() throws IOException {
            ConnectionFactory factory = new ConnectionFactory();
            try {
                factory.setUri(uri);
            } catch (java.net.URISyntaxException | java.security.GeneralSecurityException | IllegalArgumentException e) {
                throw new IllegalArgumentException("--uri must be an amqp:// or amqps:// URI, got '" + uri + "'");
            }
            factory.setConnectionTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            factory.setAutomaticRecoveryEnabled(false);
            try {
                return factory.newConnection("stagger-cli");
            } catch (TimeoutException e) {
                throw new IOException("timed out connecting to " + factory.getHost() + ":" + factory.getPort(), e);
            }
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

        abstract int run(DeadLetters dead, PrintWriter out) throws IOException;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try (Connection connection = broker.connect()) {
                int code = run(DeadLetters.of(connection, broker.queue), out);
                out.flush();
                return code;
            } catch (IllegalArgumentException e) {
                err.println("stagger rabbitmq: " + e.getMessage());
                return 2;
            } catch (IOException | RuntimeException e) {
                err.println("stagger rabbitmq: broker error: " + BrokerErrors.describe(e));
                return 3;
            }
        }
    }

    @Command(name = "dead", mixinStandardHelpOptions = true,
            description = "List dead letters, oldest first, with each one's error history; they stay in the queue.")
    static final class Dead extends Base {
        @Option(names = "--limit", defaultValue = "20", description = "most messages listed (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        int run(DeadLetters dead, PrintWriter out) throws IOException {
            long count = dead.count();
            List<DeadLetter> letters = dead.list(limit);
            out.printf(Locale.ROOT, "%d dead letter(s) in %s%s%n", count, dead.deadLetterQueue(),
                    count > letters.size() ? ", showing the first " + letters.size() : "");
            for (DeadLetter d : letters) {
                out.printf(Locale.ROOT, "%nmessage %s: %s after %d attempt(s)%s%s, %d bytes%n",
                        d.messageId().orElse("(no message-id)"), d.endReason().orElse("(no end reason)"), d.attempts(),
                        d.deadAt().map(t -> " at " + t).orElse(""),
                        d.redrives() > 0 ? ", re-driven " + d.redrives() + " time(s) before" : "", d.bodyBytes());
                for (MessageError e : d.history()) {
                    out.printf(Locale.ROOT, "  attempt %d at %s: %s: %s%n", e.attempt(), e.failedAt(), e.exceptionClass(),
                            e.message());
                }
            }
            return 0;
        }
    }

    @Command(name = "redrive", mixinStandardHelpOptions = true,
            description = "Send dead letters back to the work queue with fresh attempts (their history stays).")
    static final class Redrive extends Base {
        @Option(names = "--limit", defaultValue = "" + DeadLetters.MAX_BATCH,
                description = "most messages re-driven (default: all, up to ${DEFAULT-VALUE})")
        int limit;

        @Override
        int run(DeadLetters dead, PrintWriter out) throws IOException {
            out.printf(Locale.ROOT, "re-drove %d dead letter(s) to %s%n", dead.redrive(limit), dead.queue());
            return 0;
        }
    }

    @Command(name = "purge", mixinStandardHelpOptions = true, description = "Delete every dead letter of the queue.")
    static final class Purge extends Base {
        @Override
        int run(DeadLetters dead, PrintWriter out) throws IOException {
            out.printf(Locale.ROOT, "purged %d dead letter(s) from %s%n", dead.purge(), dead.deadLetterQueue());
            return 0;
        }
    }
}
