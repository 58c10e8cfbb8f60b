package dev.ferry.store;

import java.util.List;

/**
 * One page of a listing, objects in key order; {@code nextToken} is null on the last page.
 */
public record ListPage(List<ObjectMeta> objects, List<String> commonPrefixes, String nextToken) {
    public ListPage {
        objects = List.copyOf(objects);
        commonPrefixes = List.copyOf(commonPrefixes);
    }

    public boolean isTruncated() {
        return nextToken != null;
    }
}
