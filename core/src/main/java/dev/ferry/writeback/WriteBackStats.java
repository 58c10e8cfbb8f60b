package dev.ferry.writeback;

/**
 * Write-back at a glance: pending bytes and objects, the age of the oldest pending write, bytes uploaded so
 * far and how long uploads took, writes that went through directly (quota full), uploads that failed for good.
 */
public record WriteBackStats(long pendingBytes, long pendingObjects, double oldestPendingSeconds, long uploadedBytes,
        double uploadSeconds, long writeThroughs, long failed) {
    /** Upload throughput so far, bytes per second of upload time. */
    public double uploadBytesPerSecond() {
        return uploadSeconds == 0 ? 0 : uploadedBytes / uploadSeconds;
    }
}
