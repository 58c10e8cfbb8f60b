package dev.ferry.util;

import java.net.URI;
import java.net.URISyntaxException;

/** URLs made safe to show: the {@code user:password} a URL may carry never reaches a page, a status answer or a log. */
public final class Secrets {
    private Secrets() {
    }

    /** {@code url} without its user information ({@code http://user:password@host} is {@code http://host}); null stays null. */
    public static URI withoutUserInfo(URI url) {
        if (url == null || url.getRawUserInfo() == null) {
            return url;
        }
        try {
            return new URI(url.getScheme(), null, url.getHost(), url.getPort(), url.getPath(), url.getQuery(), url.getFragment());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("cannot take the credentials out of a URL: " + e.getMessage(), e);
        }
    }

    /** {@code url} as shown to people: its user information replaced by {@code ***}. */
    public static String shown(URI url) {
        if (url == null || url.getRawUserInfo() == null) {
            return String.valueOf(url);
        }
        URI bare = withoutUserInfo(url);
        return bare.getScheme() + "://***@" + bare.getRawAuthority() + (bare.getRawPath() == null ? "" : bare.getRawPath())
                + (bare.getRawQuery() == null ? "" : "?" + bare.getRawQuery());
    }
}
