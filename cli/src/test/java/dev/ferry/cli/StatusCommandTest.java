package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** {@code ferry status} when there is nothing to show: one sentence that says what to do, and a failing exit code. */
class StatusCommandTest {
    @Test
    void noDaemonListening_saysSoInOneSentence_exitsNonZero() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        String url = "http://127.0.0.1:" + port;
        MainTest.Run r = MainTest.run("status", "--url", url);
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err().strip()).isEqualTo("ferry: no ferry daemon answers at " + url + ": start one with ferry serve.");
    }
}
