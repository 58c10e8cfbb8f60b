/**
 * The tier stack every front end runs: {@link dev.ferry.tier.TierSettings}, the settings rows of the tiers that
 * {@code ferry serve} and {@code ferry mount} share (each adds its own rows to them), and
 * {@link dev.ferry.tier.TierStack}, which assembles origin -> chain -> shared tier -> group -> local tier ->
 * write-back from them. Depends on {@code settings}, {@code store} (chain and tiers), {@code cache},
 * {@code writeback} and the JDK; nothing in core depends on it.
 */
package dev.ferry.tier;
