package dev.ferry.loader;

import java.io.IOException;

/** Turns a sample's raw fields into what the model consumes (decode, augment); runs on the decode workers. */
@FunctionalInterface
public interface Decoder<T> {
    T decode(Sample sample) throws IOException;

    /** No decoding: the sample itself (the loader skips the hand-off to a decode worker). */
    static Decoder<Sample> identity() {
        return Identity.INSTANCE;
    }

    /** The identity decoder, recognizable by the loader. */
    enum Identity implements Decoder<Sample> {
        INSTANCE;

        @Override
        public Sample decode(Sample sample) {
            return sample;
        }
    }
}
