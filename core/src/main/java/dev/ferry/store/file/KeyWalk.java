package dev.ferry.store.file;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.stream.Stream;

/**
 * The keys of a bucket folder that start with a prefix, in key order, after a key: read a folder at a time as the
 * listing asks for more, so a page costs the folders it reaches, not the whole tree under the prefix. A folder whose
 * keys all sort at or before the point to resume from is never read, which is what lets a listing start in the middle
 * of a large tree ({@code start-after}, a continuation token) for the price of the path down to it.
 *
 * <p>A folder's entries are ordered by name, a subfolder's name with its {@code /}: keys then come in the order
 * {@link String#compareTo} gives whole keys ({@code a.b} before {@code a/x} before {@code a0}). Not thread-safe.
 */
final class KeyWalk implements Iterator<String> {
    private record Entry(String key, boolean folder) {
    }

    private final Path bucketDir;
    private final String prefix;
    private String after;
    /** The entries of each folder being read, outermost first. */
    private final ArrayDeque<Iterator<Entry>> open = new ArrayDeque<>();
    private String next;

    /**
     * The keys under {@code bucketDir} starting with {@code prefix} and sorting after {@code after} (null: all),
     * read from {@code start} (the deepest folder every such key lies in).
     */
    KeyWalk(Path bucketDir, Path start, String prefix, String after) {
        this.bucketDir = bucketDir;
        this.prefix = prefix;
        this.after = after;
        String top = start.equals(bucketDir) ? "" : keyOf(start) + "/";
        open.push(entries(start, top).iterator());
    }

    /** Skips every key up to and including {@code key}: a listing that rolled up a common prefix skips what is under it. */
    void skipTo(String key) {
        if (after == null || key.compareTo(after) > 0) {
            after = key;
        }
    }

    @Override
    public boolean hasNext() {
        while (next == null && !open.isEmpty()) {
            Iterator<Entry> it = open.peek();
            if (!it.hasNext()) {
                open.pop();
                continue;
            }
            Entry e = it.next();
            if (e.folder()) {
                if (wanted(e.key())) {
                    open.push(entries(bucketDir.resolve(e.key()), e.key()).iterator());
                }
            } else if (e.key().startsWith(prefix) && (after == null || e.key().compareTo(after) > 0)) {
                next = e.key();
            }
        }
        return next != null;
    }

    @Override
    public String next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        String k = next;
        next = null;
        return k;
    }

    /** Whether a key under {@code folder} (ending in {@code /}) can start with the prefix and sort after the resume point. */
    private boolean wanted(String folder) {
        if (!folder.startsWith(prefix) && !prefix.startsWith(folder)) {
            return false;
        }
        // every key under the folder sorts before `after` when `after` lies past it and not inside it
        return after == null || after.startsWith(folder) || folder.compareTo(after) > 0;
    }

    private String keyOf(Path p) {
        return bucketDir.relativize(p).toString().replace(p.getFileSystem().getSeparator(), "/");
    }

    /** A folder's files and subfolders (keys ending in {@code /}), in key order; none when it went away. */
    private List<Entry> entries(Path dir, String top) {
        List<Entry> out = new ArrayList<>();
        try (Stream<Path> children = Files.list(dir)) {
            children.forEach(p -> {
                boolean folder = Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS); // as Files.walk: links not followed
                if (folder || Files.isRegularFile(p)) {
                    String name = p.getFileName().toString();
                    out.add(new Entry(top + name + (folder ? "/" : ""), folder));
                }
            });
        } catch (NoSuchFileException | NotDirectoryException gone) {
            return List.of(); // removed while listing
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (UncheckedIOException e) {
            if (e.getCause() instanceof NoSuchFileException) {
                return List.of();
            }
            throw e;
        }
        out.sort((a, b) -> a.key().compareTo(b.key()));
        return out;
    }
}
