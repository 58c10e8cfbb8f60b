package dev.ferry.serve.jobs;

import java.util.concurrent.CancellationException;

/**
 * Whether the client of a request has closed its connection. Long work done for one request (a job
 * registration builds plans and predictions for up to a few seconds) checks between its steps and stops,
 * rather than finish for nobody: the work a client abandoned costs at most one step more. Thread-safe.
 */
@FunctionalInterface
public interface ClientGone {
    /** For work no client waits on (an epoch started by a progress report, a test). */
    ClientGone NEVER = () -> false;

    boolean gone();

    /** Throws when the client has gone; nothing of the work so far takes effect. */
    default void check() {
        if (gone()) {
            throw new CancellationException("the client closed its connection before the answer: the work stopped");
        }
    }
}
