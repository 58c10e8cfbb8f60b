package dev.ferry.store.chain;

import dev.ferry.store.Prices;
import java.util.Objects;

/** Settings of the standard chain ({@link StoreChain}): one record per decorator, each with its defaults. */
public record ChainConfig(ParallelReadConfig parallelRead, RetryPolicy retry, GovernorConfig governor, Prices prices) {
    public static final ChainConfig DEFAULT =
            new ChainConfig(ParallelReadConfig.DEFAULT, RetryPolicy.DEFAULT, GovernorConfig.DEFAULT, Prices.AWS_S3_STANDARD);

    public ChainConfig {
        Objects.requireNonNull(parallelRead, "parallelRead is null");
        Objects.requireNonNull(retry, "retry is null");
        Objects.requireNonNull(governor, "governor is null");
        Objects.requireNonNull(prices, "prices is null");
    }

    public ChainConfig withParallelRead(ParallelReadConfig config) {
        return new ChainConfig(config, retry, governor, prices);
    }

    public ChainConfig withRetry(RetryPolicy policy) {
        return new ChainConfig(parallelRead, policy, governor, prices);
    }

    public ChainConfig withGovernor(GovernorConfig config) {
        return new ChainConfig(parallelRead, retry, config, prices);
    }
}
