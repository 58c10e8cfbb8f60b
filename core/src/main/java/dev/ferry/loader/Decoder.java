package dev.ferry.loader;

import java.io.IOException;

/** Turns a sample's raw fields into what the model consumes (decode, augment); runs on the decode workers. */
@FunctionalInterface
public interface Decoder<T> {
    T decode(Sample sample) throws IOException;

    /** No decoding: the sample itself. */
    static Decoder<Sample> identity() {
        return s -> s;
    }
}
