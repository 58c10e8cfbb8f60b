/**
 * Write-back: local disk as the first home of objects written repeatedly (checkpoints), acknowledged once
 * fsync'd locally, journaled, and uploaded in the background; a fence ({@code flush}) returns when what was
 * acknowledged before it is durable in the object store. {@code WriteBackStore} is the store; its
 * {@code WriteJournal} keeps the writes on disk, its {@code PendingWrites} what is not durable yet (and the
 * fence); {@code Scratch} is a node-local bucket never uploaded. Depends on {@code store}, {@code store.file},
 * {@code time} and the JDK.
 */
package dev.ferry.writeback;
