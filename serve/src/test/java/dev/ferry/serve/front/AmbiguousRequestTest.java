package dev.ferry.serve.front;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.RawHttp;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request that names a thing twice is refused with 400, whichever comes first, and acts on nothing
 * (issue 20 item 9): a query parameter given twice, an element given twice in an XML body. A version id is
 * taken as sent. Raw sockets, since no client library sends these.
 */
class AmbiguousRequestTest {
    @TempDir
    static Path dir;
    static DaemonFixture ferry;

    @BeforeAll
    static void start() throws Exception {
        ferry = DaemonFixture.overFolder(dir).start();
    }

    @AfterAll
    static void stop() {
        ferry.close();
    }

    @BeforeEach
    void objects() throws Exception {
        for (String k : new String[] {"a.txt", "b.txt"}) {
            assertThat(send("PUT", "/data/" + k, "current " + k).status()).isEqualTo(200);
        }
    }

    private static RawHttp.Answer send(String method, String target, String body) throws Exception {
        int length = body.getBytes(StandardCharsets.UTF_8).length;
        return RawHttp.exchange(ferry.endpoint().getPort(), method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + length
                + "\r\nConnection: close\r\n\r\n" + body);
    }

    private static boolean exists(String key) {
        return Files.exists(ferry.root.resolve("data").resolve(key));
    }

    @Test
    void aQueryParameterGivenTwice_isRefused_inEitherOrder_andNothingIsDeleted() throws Exception {
        for (String query : new String[] {"versionId=null&versionId=abc", "versionId=abc&versionId=null", "versionId=null&versionId=null"}) {
            for (String method : new String[] {"GET", "HEAD", "DELETE"}) {
                RawHttp.Answer a = send(method, "/data/a.txt?" + query, "");
                assertThat(a.status()).as(method + " ?" + query).isEqualTo(400);
                if (!method.equals("HEAD")) {
                    assertThat(a.body()).contains("<Code>InvalidArgument</Code>").contains("versionId 2 times");
                }
            }
        }
        RawHttp.Answer twice = send("GET", "/data?list-type=2&prefix=a&prefix=b", "");
        assertThat(twice.status()).isEqualTo(400);
        assertThat(twice.body()).contains("prefix 2 times");
        assertThat(exists("a.txt")).isTrue();
        assertThat(send("GET", "/data/a.txt?versionId=null", "").body()).isEqualTo("current a.txt");
    }

    @Test
    void deleteObjects_withAnObjectOfTwoKeysOrTwoVersions_isMalformed_andDeletesNothing() throws Exception {
        for (String object : new String[] {"<Object><Key>a.txt</Key><Key>b.txt</Key></Object>",
                "<Object><Key>a.txt</Key><VersionId>null</VersionId><VersionId>abc</VersionId></Object>"}) {
            RawHttp.Answer a = send("POST", "/data?delete", "<Delete><Object><Key>b.txt</Key></Object>" + object + "</Delete>");
            assertThat(a.status()).as(object).isEqualTo(400);
            assertThat(a.body()).contains("<Code>MalformedXML</Code>");
            assertThat(exists("a.txt") && exists("b.txt")).as("nothing deleted by " + object).isTrue();
        }
        RawHttp.Answer quiet = send("POST", "/data?delete", "<Delete><Quiet>true</Quiet><Quiet>false</Quiet>"
                + "<Object><Key>a.txt</Key></Object></Delete>");
        assertThat(quiet.status()).isEqualTo(400);
        assertThat(exists("a.txt")).isTrue();
    }

    @Test
    void deleteObjects_takesAVersionIdAsSent_aPaddedNullIsNotTheCurrentVersion() throws Exception {
        RawHttp.Answer a = send("POST", "/data?delete", "<Delete><Object><Key>a.txt</Key><VersionId> null</VersionId></Object>"
                + "<Object><Key>b.txt</Key><VersionId>null</VersionId></Object></Delete>");
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.body()).contains("<Error><Key>a.txt</Key>").contains("<Deleted><Key>b.txt</Key></Deleted>");
        assertThat(exists("a.txt")).as("a.txt, named with version ' null'").isTrue();
        assertThat(exists("b.txt")).as("b.txt, named with version 'null'").isFalse();
    }

    @Test
    void completeMultipartUpload_withAPartOfTwoNumbers_isMalformed() throws Exception {
        RawHttp.Answer a = send("POST", "/data/mp?uploadId=abc", "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>"
                + "<PartNumber>2</PartNumber><ETag>\"x\"</ETag></Part></CompleteMultipartUpload>");
        assertThat(a.status()).isEqualTo(400);
        assertThat(a.body()).contains("<Code>MalformedXML</Code>");
    }
}
