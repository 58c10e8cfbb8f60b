package dev.ferry.cli.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** One line naming the machine a figure was measured on: cores, CPU model, memory, OS, Java. */
public final class Machine {
    private Machine() {
    }

    public static String describe() {
        String cpu = "unknown CPU";
        try {
            cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
                    .filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip())
                    .findFirst().orElse(cpu);
        } catch (IOException ignored) {
            // not Linux: leave it unknown
        }
        long memGib = 0;
        try {
            memGib = Files.readAllLines(Path.of("/proc/meminfo")).stream()
                    .filter(l -> l.startsWith("MemTotal"))
                    .mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", "")) / (1024 * 1024))
                    .findFirst().orElse(0);
        } catch (IOException | NumberFormatException ignored) {
            // unknown
        }
        return Runtime.getRuntime().availableProcessors() + " cores (" + cpu + "), " + memGib + " GiB, "
                + System.getProperty("os.name") + " " + System.getProperty("os.version") + ", Java " + Runtime.version();
    }
}
