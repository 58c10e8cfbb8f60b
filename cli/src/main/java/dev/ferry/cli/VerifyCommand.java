package dev.ferry.cli;

import dev.ferry.cache.CacheVerifier;
import dev.ferry.cli.errors.UserError;
import dev.ferry.util.Sizes;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ferry verify}: checks every block of a local cache and removes bad ones. */
@Command(name = "verify", mixinStandardHelpOptions = true,
        description = {"Check every block of a cache directory (header, length, CRC32C) and remove the bad ones.",
                "Exit code: 0 when all blocks are good, 3 when bad blocks were found (and removed), 1 on error."})
final class VerifyCommand implements Callable<Integer> {
    static final int BAD_BLOCKS_FOUND = 3;

    @Option(names = "--cache-dir", required = true, paramLabel = "DIR", description = "The cache directory.")
    Path cacheDir;

    @Override
    public Integer call() throws Exception {
        CacheVerifier.Report report;
        try {
            report = CacheVerifier.verify(cacheDir);
        } catch (IOException e) {
            throw new UserError(e.getMessage(), 1);
        }
        System.out.println("checked " + report.blocks() + " good blocks (" + Sizes.format(report.bytes()) + ") in " + cacheDir
                + (report.temporariesRemoved() > 0 ? "; removed " + report.temporariesRemoved() + " unfinished writes" : ""));
        if (report.clean()) {
            System.out.println("no bad blocks");
            return 0;
        }
        System.out.println(report.problems().size() + " bad block" + (report.problems().size() == 1 ? "" : "s") + " found and removed:");
        report.problems().stream().limit(20).forEach(p -> System.out.println("  " + p));
        if (report.problems().size() > 20) {
            System.out.println("  ... and " + (report.problems().size() - 20) + " more");
        }
        return BAD_BLOCKS_FOUND;
    }
}
