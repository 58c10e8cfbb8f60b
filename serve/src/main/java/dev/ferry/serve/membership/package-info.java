/**
 * Who is in the regional group, from the engine the cluster already runs: {@link dev.ferry.serve.membership.GroupSpec}
 * reads {@code --group} (a static list, {@code dns:NAME:PORT}, {@code etcd:URL/PREFIX}), a
 * {@link dev.ferry.serve.membership.Membership} follows it and reports each new member list, and
 * {@link dev.ferry.serve.membership.MemberProber} tells the group which members answer. The group itself (routing by
 * rendezvous hashing, failover) is {@code dev.ferry.store.shared.GroupStore}. Depends on the JDK (its HTTP client,
 * JNDI's DNS provider) and {@code store.tier}; nothing here knows of the daemon's other packages.
 */
package dev.ferry.serve.membership;
