/**
 * The simulator: replays access traces through the shipped eviction policies (the classes the local tier
 * runs) to answer "will my cache be big enough, and with which policy?" without touching a disk. Depends on
 * {@code cache.policy} and the JDK only.
 */
package dev.ferry.sim;
