/**
 * NodeStack between the local tier and the origin, each an {@link dev.ferry.store.ObjectStore} that wraps
 * another: {@link dev.ferry.store.shared.GroupStore} (a regional group of nodes, each object owned by one member
 * by {@link dev.ferry.store.shared.Rendezvous} hashing, peers asked before the origin) and
 * {@link dev.ferry.store.shared.SharedTierStore} (a shared file system as a tier). The daemon's peer hints
 * ({@code serve.HintedStore}) sit on top of the group. Depends on {@code store} (the interface, values and
 * the folder store) and the JDK; nothing in {@code store} depends on it.
 */
package dev.ferry.store.shared;
