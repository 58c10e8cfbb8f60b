package dev.ferry.cache;

import dev.ferry.store.ObjectMeta;

/** Told of the blocks every read of the local tier asks for, resident or not, in the order it asks for them. */
@FunctionalInterface
interface ReadObserver {
    void onRead(ObjectMeta meta, long firstIndex, long lastIndex);

    /** A reader's read of {@code meta} went to the store from block {@code firstIndex} (not a prefetch). */
    default void onMiss(ObjectMeta meta, long firstIndex) {
    }
}
