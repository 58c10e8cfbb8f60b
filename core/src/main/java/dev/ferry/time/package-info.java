/**
 * Injected time: a {@link dev.ferry.time.Clock} that reads and sleeps, so decorators, caches and the
 * simulator run on real time in production and on simulated time in tests. Depends on the JDK only.
 */
package dev.ferry.time;
