/**
 * One node of the daemon, without its network front: {@code Node} builds and owns the tier stack from a
 * {@code NodeConfig} (origin, chain, shared tier, regional group, hints, local tier, write-back, scratch) and
 * what runs beside it: metrics, prefetch, eviction that follows the jobs' plans, the status and expiry timers.
 * Also {@code Origin} (the store at the bottom, as built), {@code Counters} (the node's counters at one moment),
 * {@code HintedStore} (peer reads steered by last epoch's plan), {@code LocalMultipart} (multipart uploads staged
 * under write-back) and {@code ServeStats}.
 * Depends on core, s3 and embedded; knows nothing of Netty, S3 requests or jobs.
 */
package dev.ferry.serve.node;
