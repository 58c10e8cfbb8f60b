/**
 * Small helpers every layer needs and no concept owns: {@link dev.ferry.util.Sizes}, the parser and printer of
 * byte sizes ({@code 4MiB}, {@code 500MB}) that config files, flags, reports and the simulator share, and
 * {@link dev.ferry.util.Secrets}, URLs made safe to show.
 * Its own package rather than {@code store} (sizes are not about object storage, and a report or a flag would
 * then reach into the store's package for a string) or {@code sim} (where it lived, which made the metrics, the
 * daemon's config and the mount depend on the simulator). A leaf: depends on the JDK only, so sim, metrics,
 * serve, mount and cli may all use it without a cycle. Keep it that way, and keep it small.
 */
package dev.ferry.util;
