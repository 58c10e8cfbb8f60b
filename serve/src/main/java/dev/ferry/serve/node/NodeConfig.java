package dev.ferry.serve.node;

import dev.ferry.cache.VerifyMode;
import dev.ferry.serve.membership.GroupSpec;
import dev.ferry.settings.Settings;
import dev.ferry.tier.TierSettings;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * What a {@link Node} reads of the daemon's config ({@code dev.ferry.serve.ServeConfig} implements it, and
 * documents each setting and its default, the tier settings being {@link TierSettings}' rows); the node depends on
 * this, not on the daemon's package.
 */
public interface NodeConfig {
    /** {@link #evictionFollows()}: every registered job's future, each at its own position. */
    String ALL_JOBS = "all-jobs";
    /** {@link #evictionFollows()}: only the future of the job that reported last. */
    String LAST_REPORT = "last-report";

    /** The values of every setting, {@link TierSettings}' rows among them (the accessors below that read those are views of them). */
    Settings values();

    /** The S3 endpoint of the origin, or null. */
    default URI upstream() {
        return values().get(TierSettings.UPSTREAM);
    }

    /** The origin folder when there is no upstream, or null (then the embedded store over {@link #dataDir()}). */
    default Path storeRoot() {
        return values().get(TierSettings.STORE_ROOT);
    }

    /** The embedded store's folder. */
    Path dataDir();

    /** The embedded store's cloud profile. */
    String profile();

    /** The local tier's folder; write-back, multipart staging and scratch live beside it. */
    Path cacheDir();

    /** The local tier's capacity in bytes. */
    default long cacheSize() {
        return values().get(TierSettings.CACHE_SIZE);
    }

    /** The block size of the local tier and of plans. */
    default int blockSize() {
        return values().get(TierSettings.BLOCK_SIZE);
    }

    /** When the local tier checks a block against its CRC32C before its bytes leave. */
    default VerifyMode verify() {
        return values().get(TierSettings.VERIFY);
    }

    /** How far ahead of its consumers a job's prefetcher keeps blocks, in bytes. */
    long prefetchBytes();

    /** This daemon's access key (signs to group peers), or null. */
    String accessKey();

    /** This daemon's secret key, or null. */
    String secretKey();

    /** Whether writes go through write-back. */
    boolean writeBack();

    /** Write-back's local quota in bytes. */
    default long writeBackQuota() {
        return values().get(TierSettings.WRITE_BACK_QUOTA);
    }

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
    default Duration firstByteTimeout() {
        return values().get(TierSettings.FIRST_BYTE_TIMEOUT);
    }

    /** How long an object's size and ETag are trusted before a read asks the origin again. */
    default Duration metadataTtl() {
        return values().get(TierSettings.METADATA_TTL);
    }

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

    /**
     * The share of the local tier for decoded samples (docs/decoded-cache.md): NaN for {@code auto} (the daemon chooses
     * it from what loaders measure), 0 for {@code off}, else the fixed share, 0 to 1.
     */
    double decodedShare();
}
