package dev.ferry.store.chain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ByteRange;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.Prices;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MeteredStoreTest {
    @TempDir
    Path root;

    @Test
    void countsRequestsBytesFailuresAndCost() throws IOException {
        FileObjectStore files = new FileObjectStore(root);
        files.createBucket("bkt");
        MeteredStore meter = new MeteredStore(files, new Prices(0.09, 0.0004, 0.005));
        ObjectKey key = ObjectKey.of("bkt", "k");
        meter.put(key, PutBody.ofBytes(new byte[2_000_000]));
        meter.head(key);
        assertThat(meter.readBytes(key, null)).hasSize(2_000_000);
        assertThat(meter.readBytes(key, ByteRange.of(0, 1000))).hasSize(1000);
        meter.list(ListRequest.of("bkt", ""));
        assertThatThrownBy(() -> meter.head(ObjectKey.of("bkt", "missing"))).isInstanceOf(ObjectNotFoundException.class);

        MeterSnapshot s = meter.snapshot();
        assertThat(s.requests(MeteredStore.Op.PUT)).isEqualTo(1);
        assertThat(s.requests(MeteredStore.Op.HEAD)).isEqualTo(2);
        assertThat(s.requests(MeteredStore.Op.GET)).isEqualTo(2);
        assertThat(s.requests(MeteredStore.Op.LIST)).isEqualTo(1);
        assertThat(s.failures(StoreException.Kind.NOT_FOUND)).isEqualTo(1);
        assertThat(s.egressBytes()).isEqualTo(2_001_000);
        assertThat(s.ingressBytes()).isEqualTo(2_000_000);
        // 2.001 MB egress at $0.09/GB + 4 GET-class at $0.0004/1000 + 2 PUT-class at $0.005/1000
        double expected = 0.002001 * 0.09 + 4 * 0.0004 / 1000 + 2 * 0.005 / 1000;
        assertThat(s.estimatedCostUsd()).isCloseTo(expected, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(s.firstByteMaxMicros()).isGreaterThanOrEqualTo(s.firstByteP50Micros());
        assertThat(s.describe()).isEqualTo("2 HEAD, 2 GET, 1 LIST, 1 PUT; 1.9 MiB read, 1.9 MiB written, about $0.0002");
        assertThat(new MeteredStore(files, new Prices(0.09, 0.0004, 0.005)).snapshot().describe())
                .isEqualTo("no requests; 0 B read, 0 B written, about $0.0000");
    }
}
