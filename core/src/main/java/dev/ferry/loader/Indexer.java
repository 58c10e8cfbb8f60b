package dev.ferry.loader;

import dev.ferry.plan.Manifest;
import dev.ferry.plan.Shard;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Builds a manifest from what is stored under a prefix: every object, in key order, with its size and ETag;
 * tar shards (keys ending {@code .tar}) are read once to index where each sample starts; any other object is
 * one sample. The manifest is the dataset version a run pins.
 */
public final class Indexer {
    private Indexer() {
    }

    public static Manifest index(ObjectStore store, String bucket, String prefix, Consumer<ObjectMeta> progress) throws IOException {
        List<Shard> shards = new ArrayList<>();
        ListRequest request = ListRequest.of(bucket, prefix);
        while (true) {
            ListPage page = store.list(request);
            for (ObjectMeta m : page.objects()) {
                if (m.key().key().endsWith("/")) {
                    continue; // folder markers
                }
                if (m.key().key().endsWith(".tar")) {
                    List<Long> offsets;
                    try (ObjectContent c = store.get(new GetRequest(m.key(), null, m.etag())); InputStream in = c.stream()) {
                        offsets = TarShards.index(in);
                    }
                    if (offsets.size() < 2) {
                        continue; // an empty tar holds no samples
                    }
                    shards.add(new Shard(m.key(), m.size(), m.etag(), offsets.size() - 1, offsets));
                } else if (m.size() > 0) {
                    shards.add(new Shard(m.key(), m.size(), m.etag(), 1, List.of(0L, m.size())));
                }
                if (progress != null) {
                    progress.accept(m);
                }
            }
            if (!page.isTruncated()) {
                break;
            }
            request = request.withContinuationToken(page.nextToken());
        }
        if (shards.isEmpty()) {
            throw new IOException("nothing to index under s3://" + bucket + "/" + prefix);
        }
        return new Manifest(shards);
    }
}
