package dev.ferry.cli;

/** A problem the user can fix (bad input, missing file, port in use): printed as one sentence, no trace. */
final class UserError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int exitCode;

    UserError(String message) {
        this(message, 2);
    }

    UserError(String message, int exitCode) {
        super(message);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }
}
