/**
 * The simulator: replays access traces through the shipped eviction policies (the classes the local tier
 * runs) to answer "will my cache be big enough, and with which policy?" without touching a disk;
 * {@link dev.ferry.sim.EgressPrediction} replays a plan's node futures to predict each epoch's egress, and
 * {@code ClusterSim} runs N nodes and regional groups. Depends on {@code cache.policy}, {@code plan} (node
 * futures), {@code cache} (block ids), {@code store} (keys, prices, rendezvous) and the JDK; nothing in
 * {@code plan} depends on it.
 */
package dev.ferry.sim;
