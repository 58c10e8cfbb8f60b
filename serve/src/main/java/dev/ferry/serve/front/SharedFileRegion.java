package dev.ferry.serve.front;

import dev.ferry.store.FileRegionReadable;
import io.netty.channel.DefaultFileRegion;

/**
 * A region of a file whose channel is shared (a block of the local tier being filled or read): sent like any
 * {@link DefaultFileRegion}, file-to-socket, but released to its owner when Netty is done with it, sent or not,
 * instead of closing the channel.
 *
 * <p>Not thread-safe, as Netty's own regions: the event loop's once written.
 */
final class SharedFileRegion extends DefaultFileRegion {
    private final FileRegionReadable.Region region;

    SharedFileRegion(FileRegionReadable.Region region) {
        super(region.channel(), region.position(), region.length());
        this.region = region;
    }

    @Override
    protected void deallocate() {
        region.release();
    }
}
