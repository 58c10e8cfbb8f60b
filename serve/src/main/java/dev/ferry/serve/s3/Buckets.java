package dev.ferry.serve.s3;

import dev.ferry.tier.NodeStores;
import dev.ferry.serve.protocol.ContinuationTokens;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.serve.s3.S3Service.Request;
import dev.ferry.store.BucketOperations;
import dev.ferry.writeback.Scratch;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * ListBuckets, CreateBucket and DeleteBucket, in the origin's store, with the scratch bucket among them where there
 * is one (it lives on local disk only, and always exists). Thread-safe.
 */
final class Buckets {
    /** The most buckets one ListBuckets page holds, and its default with {@code max-buckets} given (S3's). */
    static final int MAX_BUCKETS = 10_000;

    private final BucketOperations buckets;
    private final NodeStores stores;
    /** What write-back checks before acknowledging (null without write-back): it forgets a bucket created or deleted. */
    private final WriteChecks checks;

    /** {@code buckets}: the origin's bucket operations, or null where it has none (every operation is then 501). */
    Buckets(BucketOperations buckets, NodeStores stores, WriteChecks checks) {
        this.buckets = buckets;
        this.stores = stores;
        this.checks = checks;
    }

    /**
     * ListBuckets: by name; {@code prefix}, and pages of {@code max-buckets} (1 to 10,000) with a
     * {@code ContinuationToken} to resume after the page's last bucket. Without {@code max-buckets}, all buckets.
     */
    Reply list(Request r) throws S3Error, IOException {
        if (buckets == null) {
            throw S3Error.notImplemented("ListBuckets on this upstream");
        }
        String prefix = r.param("prefix");
        int max = Integer.MAX_VALUE;
        if (r.has("max-buckets")) {
            try {
                max = Integer.parseInt(r.param("max-buckets") == null ? "" : r.param("max-buckets"));
            } catch (NumberFormatException e) {
                max = 0;
            }
            if (max < 1 || max > MAX_BUCKETS) {
                throw S3Error.invalidArgument("max-buckets must be an integer from 1 to " + MAX_BUCKETS + ", not '"
                        + Uris.abbreviate(String.valueOf(r.param("max-buckets"))) + "'");
            }
        }
        String token = r.param("continuation-token");
        String after = token == null || token.isEmpty() ? null : ContinuationTokens.parse(token).after();
        if (token != null && !token.isEmpty() && after == null) {
            throw S3Error.invalidArgument("The continuation token provided is incorrect");
        }
        List<BucketOperations.Bucket> list = new ArrayList<>(buckets.listBuckets());
        Scratch scratch = stores.scratch();
        if (scratch != null && list.stream().noneMatch(b -> b.name().equals(scratch.bucket()))) {
            list.add(new BucketOperations.Bucket(scratch.bucket(), Instant.EPOCH)); // local only: no creation date kept
        }
        list.sort(Comparator.comparing(BucketOperations.Bucket::name));
        Xml x = S3Service.owner(new Xml().openRoot("ListAllMyBucketsResult"), "Owner").open("Buckets");
        int listed = 0;
        String last = null;
        String next = null;
        for (BucketOperations.Bucket b : list) {
            if ((prefix != null && !b.name().startsWith(prefix)) || (after != null && b.name().compareTo(after) <= 0)) {
                continue;
            }
            if (listed == max) {
                next = ContinuationTokens.of(new ContinuationTokens.Resume(null, last, false)); // resume after it
                break;
            }
            x.open("Bucket").element("Name", b.name()).element("CreationDate", Listing.ISO.format(b.created())).close("Bucket");
            listed++;
            last = b.name();
        }
        x.close("Buckets").element("ContinuationToken", next).element("Prefix", prefix);
        return Reply.xml(HttpResponseStatus.OK, x.close("ListAllMyBucketsResult"));
    }

    /** CreateBucket in the store (the scratch bucket always exists, and only here). */
    Reply create(String bucket) throws S3Error, IOException {
        if (buckets == null) {
            throw S3Error.notImplemented("CreateBucket on this upstream");
        }
        if (!stores.isScratch(bucket)) {
            buckets.createBucket(bucket);
        }
        if (checks != null) {
            checks.forget(bucket);
        }
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("Location", "/" + bucket);
        return new Reply.Full(HttpResponseStatus.OK, h, new byte[0], false);
    }

    /**
     * DeleteBucket: 204 when it was empty, 409 BucketNotEmpty otherwise. A write-back write into the bucket
     * that is still only local counts: the bucket is not empty, even though the store's is.
     */
    Reply delete(String bucket) throws S3Error, IOException {
        if (buckets == null) {
            throw S3Error.notImplemented("DeleteBucket on this upstream");
        }
        if (stores.writes().heldIn(bucket)) {
            throw new S3Error(409, "BucketNotEmpty", "bucket " + bucket + " is not empty: it holds writes not uploaded yet");
        }
        if (stores.writes().deletesPendingIn(bucket)) {
            // deletes waiting behind uploads: the store still holds their keys until they are made
            stores.writes().flush(k -> k.bucket().equals(bucket), Duration.ofSeconds(30));
        }
        buckets.deleteBucket(bucket);
        if (checks != null) {
            checks.forget(bucket); // a write arriving now must find the bucket gone, not a cached "it exists"
        }
        return Reply.empty(HttpResponseStatus.NO_CONTENT);
    }
}
