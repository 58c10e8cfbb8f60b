package dev.ferry.cache.policy;

import java.util.List;

/** The shipped policies by name, for the simulator and the cache's configuration. */
public final class Policies {
    public static final List<String> NAMES = List.of("lru", "pin", "sieve", "min");

    private Policies() {
    }

    /** A fresh policy; {@code future} is the access sequence MIN needs (ignored by the others). */
    public static <K> EvictionPolicy<K> create(String name, List<K> future) {
        return switch (name) {
            case "lru" -> new LruPolicy<>();
            case "pin" -> new PinPolicy<>();
            case "sieve" -> new SievePolicy<>();
            case "min" -> new MinPolicy<>(future);
            default -> throw new IllegalArgumentException("unknown policy '" + name + "': use one of " + String.join(", ", NAMES));
        };
    }
}
