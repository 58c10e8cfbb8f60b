package dev.ferry.cache;

import dev.ferry.store.ObjectMeta;

/** Told of the blocks every read of the local tier asks for, resident or not, in the order it asks for them. */
@FunctionalInterface
interface ReadObserver {
    void onRead(ObjectMeta meta, long firstIndex, long lastIndex);
}
