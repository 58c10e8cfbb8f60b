package dev.ferry.cli.errors;

/** Turns any failure into the one sentence a user sees. */
public final class Errors {
    private Errors() {
    }

    public static String oneSentence(Throwable e) {
        String message = e.getMessage();
        if (message == null || message.isBlank()) {
            Throwable cause = e.getCause();
            message = cause != null && cause.getMessage() != null ? cause.getMessage() : e.getClass().getSimpleName();
        }
        String first = message.strip().lines().findFirst().orElse(message);
        return first.endsWith(".") ? first : first + ".";
    }
}
