package dev.ferry.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * ferry's own API ({@code /_ferry/v1/}) over a real socket, as a client calls it: a JSON body posted, an answer that
 * must be 200 read as JSON. Status codes other than 200 are the caller's to check on the raw answer.
 */
public final class ApiHttp {
    public static final ObjectMapper JSON = new ObjectMapper();

    private ApiHttp() {
    }

    /** POSTs {@code json} (null: no body) to {@code uri}. */
    public static HttpResponse<String> post(HttpClient http, URI uri, String json) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri);
        if (json == null) {
            request.POST(HttpRequest.BodyPublishers.noBody());
        } else {
            request.POST(HttpRequest.BodyPublishers.ofString(json)).header("Content-Type", "application/json");
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    public static HttpResponse<String> get(HttpClient http, URI uri) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The JSON of the 200 answer to {@code json} posted to {@code uri}. */
    public static JsonNode postOk(HttpClient http, URI uri, String json) throws Exception {
        return ok(post(http, uri, json));
    }

    /** The JSON of the 200 answer to a GET of {@code uri}. */
    public static JsonNode getOk(HttpClient http, URI uri) throws Exception {
        return ok(get(http, uri));
    }

    /** The JSON of a 200 answer; any other status fails the test with the answer's body. */
    public static JsonNode ok(HttpResponse<String> r) throws Exception {
        assertThat(r.statusCode()).as("%s %s: %s", r.request().method(), r.uri(), r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }
}
