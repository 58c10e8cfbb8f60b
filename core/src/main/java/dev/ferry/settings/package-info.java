/**
 * Settings as a table: a {@link dev.ferry.settings.Setting} is one row (key, flag, default, codec, one-line
 * description), a {@link dev.ferry.settings.SettingTable} an ordered set of rows with no key twice, and
 * {@link dev.ferry.settings.Settings} a table's values. {@link dev.ferry.settings.Codec} is the one grammar of
 * sizes, durations, switches and the like. The tier settings every command shares are rows of
 * {@code dev.ferry.tier.TierSettings}; {@code ferry serve} and {@code ferry mount} add their own rows to them.
 * Depends on {@code util} and the JDK.
 */
package dev.ferry.settings;
