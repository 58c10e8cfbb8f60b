package dev.ferry.time;

import java.net.Socket;
import java.time.Duration;

/**
 * Waits in a test for what another thread, process or server does: checks a condition until it holds, and fails the
 * test with what was awaited when it does not hold in time. This is the one place the tests poll; a test whose
 * subject is time itself (a TTL, a timeout, a pacing) advances a {@link ManualClock} instead of waiting.
 *
 * <p>The bound is generous on purpose: it only ends a test that would otherwise hang, so a slow or busy machine
 * makes a test slower, never red.
 */
public final class Await {
    /** A condition that may do I/O: an HTTP request, a listing, a file check. */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    private static final long FIRST_PAUSE_NANOS = 2_000_000L;
    private static final long LONGEST_PAUSE_NANOS = 100_000_000L;

    private Await() {
    }

    /**
     * Returns once {@code condition} holds, checking it at once and then at pauses that grow from 2 ms to 100 ms; an
     * exception from the condition counts as "not yet" (a server that is not listening yet refuses a connection), while
     * an {@link AssertionError} from it ends the wait at once (the process being waited on has exited). Fails with
     * {@code what} after {@code within}.
     *
     * @return how long it took
     */
    public static Duration until(String what, Duration within, Condition condition) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + within.toNanos();
        long pause = FIRST_PAUSE_NANOS;
        Exception last = null;
        while (true) {
            try {
                if (condition.holds()) {
                    return Duration.ofNanos(System.nanoTime() - start);
                }
                last = null;
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new AssertionError("waited " + within.toMillis() + " ms for " + what
                        + (last == null ? "" : "; the last check failed: " + last), last);
            }
            Thread.sleep(pause / 1_000_000L, (int) (pause % 1_000_000L));
            pause = Math.min(LONGEST_PAUSE_NANOS, pause * 2);
        }
    }

    /**
     * Returns once something accepts TCP connections on {@code 127.0.0.1:port}; fails at once when {@code process}
     * (the server being started; null for none) exits first, naming its exit status.
     */
    public static Duration listening(int port, Process process, Duration within) throws InterruptedException {
        return until("a listener on 127.0.0.1:" + port, within, () -> {
            if (process != null && !process.isAlive()) {
                throw new AssertionError("the server exited with " + process.exitValue() + " before listening on " + port);
            }
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                return true;
            }
        });
    }
}
