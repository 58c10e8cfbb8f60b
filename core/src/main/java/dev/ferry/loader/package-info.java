/**
 * The in-process loader: iterates the samples of WebDataset-style tar shards (members grouped by basename)
 * for one rank in plan order, with decode workers reading ahead into a bounded window, in batches, and
 * measures how long the consumer (the accelerator) waits for each batch. Depends on {@code store},
 * {@code plan}, {@code time}, commons-compress (tar) and HdrHistogram.
 */
package dev.ferry.loader;
