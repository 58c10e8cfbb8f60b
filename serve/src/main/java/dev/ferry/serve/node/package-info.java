/**
 * One node of the daemon, without its network front. {@code Node} builds and owns the tier stack from a
 * {@code NodeConfig} and is a port of a few views: {@code NodeStack} (the stores as built: the {@code Origin}, the
 * local tier, write-back with {@code LocalMultipart}, scratch), {@code Counters} (the node's counters at one
 * moment), {@code RegionalGroup} (the group as this node takes part in it, with its {@code HintedStore}: peer
 * reads steered by last epoch's plan) and {@code PlanSink} (eviction and prefetch by plan; {@code PlannedTier}
 * inside). What the node asks of whoever plans, who read a block last epoch, is {@code BlockHolders}.
 * Depends on core, s3, embedded, {@code serve.membership} and {@code serve.protocol}'s header names; knows
 * nothing of Netty, S3 requests, the front or jobs (ArchitectureTest holds it to that).
 */
package dev.ferry.serve.node;
