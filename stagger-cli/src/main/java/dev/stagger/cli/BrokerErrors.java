package dev.stagger.cli;

/** The text of a broker client's failure for the dead-letter commands ({@code rabbitmq}, {@code kafka}). */
final class BrokerErrors {
    private BrokerErrors() {
    }

    /** The first message in the chain, with its cause's message when that adds something; at most 300 characters. */
    static String describe(Exception e) {
        Throwable t = e;
        while (t.getCause() != null && t.getMessage() == null) {
            t = t.getCause();
        }
        String text = t.getMessage() != null ? t.getMessage() : t.toString();
        Throwable cause = t.getCause();
        String all = cause != null && cause.getMessage() != null && !text.contains(cause.getMessage())
                ? text + " (" + cause.getMessage() + ")" : text;
        return all.length() <= 300 ? all : all.substring(0, 297) + "...";
    }
}
