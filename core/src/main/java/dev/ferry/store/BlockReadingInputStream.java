package dev.ferry.store;

import java.io.IOException;
import java.io.InputStream;

/** An InputStream that does all its work in {@code read(byte[], int, int)}; single bytes go through it too. */
public abstract class BlockReadingInputStream extends InputStream {
    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public abstract int read(byte[] b, int off, int len) throws IOException;
}
