package dev.ferry.serve.node;

import dev.ferry.cache.VerifyMode;
import dev.ferry.serve.membership.GroupSpec;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * What a {@link Node} reads of the daemon's config ({@code dev.ferry.serve.ServeConfig} implements it, and
 * documents each setting and its default); the node depends on this, not on the daemon's package.
 */
public interface NodeConfig {
    /** {@link #evictionFollows()}: every registered job's future, each at its own position. */
    String ALL_JOBS = "all-jobs";
    /** {@link #evictionFollows()}: only the future of the job that reported last. */
    String LAST_REPORT = "last-report";

    /** The S3 endpoint of the origin, or null. */
    URI upstream();

    /** The origin folder when there is no upstream, or null (then the embedded store over {@link #dataDir()}). */
    Path storeRoot();

    /** The embedded store's folder. */
    Path dataDir();

    /** The embedded store's cloud profile. */
    String profile();

    /** The local tier's folder; write-back, multipart staging and scratch live beside it. */
    Path cacheDir();

    /** The local tier's capacity in bytes. */
    long cacheSize();

    /** The block size of the local tier and of plans. */
    int blockSize();

    /** When the local tier checks a block against its CRC32C before its bytes leave. */
    VerifyMode verify();

    /** How far ahead of its consumers a job's prefetcher keeps blocks, in bytes. */
    long prefetchBytes();

    /** This daemon's access key (signs to group peers), or null. */
    String accessKey();

    /** This daemon's secret key, or null. */
    String secretKey();

    /** Whether writes go through write-back. */
    boolean writeBack();

    /** Write-back's local quota in bytes. */
    long writeBackQuota();

    /** The address the daemon listens on (its URL in a group when {@link #self()} is not given). */
    String bind();

    /** Where the regional group's members come from (null: no group). */
    GroupSpec group();

    /** This daemon's URL in the group, or null: the member on this daemon's port at one of this host's addresses. */
    URI self();

    /** How often a dns: group is looked up again, and an etcd: group's lease renewed. */
    Duration groupRefresh();

    /** How often the other members are asked whether they answer (zero: never; reads alone find a member down). */
    Duration groupProbe();

    /** A shared file system used as a tier, or null. */
    Path sharedTier();

    /** How long a read waits for the origin's first byte, retries included. */
    Duration firstByteTimeout();

    /** How long an object's size and ETag are trusted before a read asks the origin again. */
    Duration metadataTtl();

    /** Multipart uploads older than this are aborted. */
    Duration multipartTtl();

    /** {@link #ALL_JOBS} or {@link #LAST_REPORT}. */
    String evictionFollows();

    /** The node-local scratch bucket, or null. */
    String scratchBucket();

    /** The scratch bucket's quota in bytes. */
    long scratchQuota();

    /** How long a scratch object lives. */
    Duration scratchTtl();
}
