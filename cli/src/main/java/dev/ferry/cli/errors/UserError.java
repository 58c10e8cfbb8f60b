package dev.ferry.cli.errors;

/** A problem the user can fix (bad input, missing file, port in use): printed as one sentence, no trace. */
public final class UserError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int exitCode;

    public UserError(String message) {
        this(message, 2);
    }

    public UserError(String message, int exitCode) {
        super(message);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
