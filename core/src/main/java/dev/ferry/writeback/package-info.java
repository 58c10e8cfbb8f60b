/**
 * Write-back: local disk as the first home of objects written repeatedly (checkpoints), acknowledged once
 * fsync'd locally, journaled, and uploaded in the background; a fence ({@code flush}) returns when what was
 * acknowledged before it is durable in the object store. Depends on {@code store} and the JDK.
 */
package dev.ferry.writeback;
