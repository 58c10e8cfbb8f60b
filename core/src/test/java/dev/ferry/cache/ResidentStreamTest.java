package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.FileRegionReadable.Region;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A read of blocks on disk hands out its regions whole or in parts; each block file is let go once, when all its parts are. */
class ResidentStreamTest {
    @Test
    void aRegionHandedOutInParts_isReleasedWhenEveryPartIs_andCloseLetsGoOfTheRest(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("blocks");
        byte[] bytes = new byte[1000];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) i;
        }
        Files.write(file, bytes);
        AtomicInteger firstReleased = new AtomicInteger();
        AtomicInteger secondReleased = new AtomicInteger();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ResidentStream in = new ResidentStream(List.of(new Region(ch, 0, 600, firstReleased::incrementAndGet),
                    new Region(ch, 600, 400, secondReleased::incrementAndGet)));

            Region a = in.nextRegion(250);
            Region b = in.nextRegion(250);
            assertThat(a.position()).isZero();
            assertThat(a.length()).isEqualTo(250);
            assertThat(b.position()).isEqualTo(250);
            a.release();
            b.release();
            assertThat(firstReleased).as("a third part still holds the block").hasValue(0);

            byte[] read = new byte[100];
            assertThat(in.read(read, 0, 100)).isEqualTo(100); // the last part's first bytes, copied
            assertThat(read[0]).isEqualTo(bytes[500]);
            Region c = in.nextRegion(1000);
            assertThat(c.position()).isEqualTo(600); // the rest of the first was read: the second comes whole
            assertThat(firstReleased).as("every part of the first released").hasValue(1);
            c.release();
            assertThat(secondReleased).hasValue(1);
            assertThat(in.nextRegion(1000)).isNull();
            in.close();
            assertThat(firstReleased).hasValue(1);
            assertThat(secondReleased).hasValue(1);

            ResidentStream untaken = new ResidentStream(List.of(new Region(ch, 0, 600, firstReleased::incrementAndGet)));
            untaken.nextRegion(100).release();
            untaken.close();
            assertThat(firstReleased).as("a stream closed part-way lets go of what it still held").hasValue(2);
        }
    }
}
