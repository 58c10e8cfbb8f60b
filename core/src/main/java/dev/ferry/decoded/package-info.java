/**
 * Decoded samples kept on the node's tier (docs/decoded-cache.md): a loader's decode output stored under a key naming
 * the object, its version, the sample and the decode, node-local and never uploaded ({@link DecodedSamples}), and the
 * cost model that splits the tier between encoded blocks and decoded samples ({@link DecodedSplit}).
 */
package dev.ferry.decoded;
