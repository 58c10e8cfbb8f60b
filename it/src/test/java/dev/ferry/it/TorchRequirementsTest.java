package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where scripts/test installs PyTorch from: this machine kind's local wheel store when there is one, else
 * PyTorch's public CPU index, so that the suite runs on any machine with network access.
 */
class TorchRequirementsTest {
    static final Path REPO = Path.of("..").toAbsolutePath().normalize();

    private static String chosen(Path localRoot) throws Exception {
        Servers.Result r = Servers.run(Duration.ofSeconds(20), Map.of("FERRY_LOCAL_WHEELS", localRoot.toString()), "bash", "-c",
                "cd '" + REPO + "' && . scripts/lib/python.sh && ferry_torch_requirements");
        assertThat(r.exitCode()).as(r.output()).isZero();
        return r.output().strip();
    }

    @Test
    void withoutTheLocalWheelStore_installsFromPytorchsCpuIndex(@TempDir Path empty) throws Exception {
        String file = chosen(empty);
        assertThat(file).isEqualTo("scripts/requirements-torch-cpu.txt");
        assertThat(Files.readAllLines(REPO.resolve(file))).contains("--index-url https://download.pytorch.org/whl/cpu")
                .noneMatch(line -> line.contains("/opt/"));
    }

    @Test
    void withTheLocalWheelStore_installsFromIt(@TempDir Path opt) throws Exception {
        Files.createDirectories(opt.resolve("pypi/simple"));
        Files.createFile(Files.createDirectories(opt.resolve("wheels")).resolve("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"));
        assertThat(chosen(opt)).isEqualTo("scripts/requirements-torch.txt");
    }

    @Test
    void scriptsTest_installsWhatTheChoiceNames() throws Exception {
        assertThat(Files.readString(REPO.resolve("scripts/test"))).contains("$(ferry_torch_requirements)")
                .doesNotContain("-r scripts/requirements-torch.txt");
    }
}
