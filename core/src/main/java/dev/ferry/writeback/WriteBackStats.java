package dev.ferry.writeback;

/**
 * Write-back at a glance: pending bytes and objects (writes and deletes not in the store yet), the age of the
 * oldest pending one, bytes uploaded so far and how long uploads took, writes that went through directly
 * (quota full), writes held failed now (refused by the store, or stored as something else; kept locally until
 * a later write of their key replaces them) and the first of them with its reason, or null; writes uploaded and
 * settling (an abandoned attempt at their key may still land), late attempts found to have overtaken a newer write
 * and repaired so far, and writes being retried now with the first of them and its last error, or null.
 */
public record WriteBackStats(long pendingBytes, long pendingObjects, double oldestPendingSeconds, long uploadedBytes,
        double uploadSeconds, long writeThroughs, long failed, String firstFailure, long settling, long repaired, long retrying,
        String firstRetrying) {
    /** Upload throughput so far, bytes per second of upload time. */
    public double uploadBytesPerSecond() {
        return uploadSeconds == 0 ? 0 : uploadedBytes / uploadSeconds;
    }
}
