package dev.ferry.serve.membership;

import java.net.URI;
import java.util.List;
import java.util.function.Consumer;

/** The members listed by hand ({@code --group URL1,URL2,...}): they never change. Immutable. */
final class StaticMembership implements Membership {
    private final List<URI> members;

    StaticMembership(List<URI> members) {
        this.members = List.copyOf(members);
    }

    @Override
    public String source() {
        return "static";
    }

    @Override
    public void start(URI self, Consumer<List<URI>> listener) {
        listener.accept(members);
    }

    @Override
    public void close() {
    }
}
