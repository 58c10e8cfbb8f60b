/**
 * The four numbers, always together: samples/s at the loader, the consumer's wait per step, the local tier's
 * hit rate, and what was egressed from the object store (bytes, requests, estimated cost), per epoch, with
 * the egress the plan predicted; and the advisor that reads them together. Depends on {@code loader},
 * {@code cache}, {@code store} and the JDK.
 */
package dev.ferry.metrics;
