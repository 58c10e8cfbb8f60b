package dev.ferry.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The launchers' environments, variable for variable as they set them: torchrun (torch's
 * {@code LocalElasticAgent._start_workers}), the Kubeflow training operator ({@code setPodEnv}: a PyTorchJob's pod
 * outside torchrun) and a JobSet's pod (an Indexed Job's {@code JOB_COMPLETION_INDEX}, nothing more). The same
 * cases are in the Python client's tests (test_placement.py).
 */
public class PlacementTest {
    /** What torchrun gives the process of local rank {@code local} on node {@code node} of {@code nodes} x {@code perNode}. */
    public static Map<String, String> torchrun(int nodes, int perNode, int node, int local) {
        Map<String, String> env = new HashMap<>();
        env.put("LOCAL_RANK", Integer.toString(local));
        env.put("RANK", Integer.toString(node * perNode + local));
        env.put("GROUP_RANK", Integer.toString(node));
        env.put("ROLE_RANK", Integer.toString(node * perNode + local));
        env.put("ROLE_NAME", "default");
        env.put("LOCAL_WORLD_SIZE", Integer.toString(perNode));
        env.put("WORLD_SIZE", Integer.toString(nodes * perNode));
        env.put("GROUP_WORLD_SIZE", Integer.toString(nodes));
        env.put("ROLE_WORLD_SIZE", Integer.toString(nodes * perNode));
        env.put("MASTER_ADDR", "train-master-0");
        env.put("MASTER_PORT", "29500");
        env.put("TORCHELASTIC_RESTART_COUNT", "0");
        env.put("TORCHELASTIC_MAX_RESTARTS", "0");
        env.put("TORCHELASTIC_RUN_ID", "none");
        return env;
    }

    @Test
    void torchrun_givesWorldNodeAndRank() {
        Placement p = Placement.fromEnvironment(torchrun(4, 8, 2, 5), 1);
        assertThat(p.world()).isEqualTo(new World(4, 8, 1));
        assertThat(p.node()).isEqualTo(2);
        assertThat(p.rank()).isEqualTo(21);
        assertThat(p.localRank()).isEqualTo(5);
        assertThat(p.source()).isEqualTo("torchrun");
    }

    @Test
    void torchrunInsideAKubeflowPod_torchrunsVariablesWin() {
        // the training operator's variables stay in the environment torchrun's processes inherit:
        // RANK there was the pod's index, torchrun overwrote it
        Map<String, String> env = torchrun(2, 4, 1, 3);
        env.putAll(Map.of("PET_NNODES", "2", "PET_NPROC_PER_NODE", "4", "PET_NODE_RANK", "1", "PET_MASTER_ADDR", "j-master-0",
                "PET_MASTER_PORT", "23456", "PYTHONUNBUFFERED", "0"));
        Placement p = Placement.fromEnvironment(env, 2);
        assertThat(p.world()).isEqualTo(new World(2, 4, 2));
        assertThat(p.node()).isEqualTo(1);
        assertThat(p.rank()).isEqualTo(7);
    }

    @Test
    void launcherWithNodeRankInsteadOfGroupRank_usesIt() {
        Map<String, String> env = new HashMap<>(Map.of("WORLD_SIZE", "16", "LOCAL_WORLD_SIZE", "8", "RANK", "9", "LOCAL_RANK", "1",
                "NODE_RANK", "1"));
        Placement p = Placement.fromEnvironment(env, 1);
        assertThat(p.node()).isEqualTo(1);
        assertThat(p.source()).isEqualTo("WORLD_SIZE");
        env.remove("NODE_RANK");
        assertThat(Placement.fromEnvironment(env, 1).node()).as("RANK / LOCAL_WORLD_SIZE").isEqualTo(1);
    }

    @Test
    void kubeflowPodWithNprocPerNode_knowsItsNodeNotItsRank() {
        // training operator >= 1.7, nprocPerNode 8, 3 replicas, the worker of index 1 (RANK = index + 1 after the master)
        Map<String, String> env = Map.of("MASTER_ADDR", "j-master-0", "MASTER_PORT", "23456", "WORLD_SIZE", "24", "RANK", "2",
                "PET_NPROC_PER_NODE", "8", "PET_NODE_RANK", "2", "PET_NNODES", "3", "PYTHONUNBUFFERED", "0");
        Placement p = Placement.fromEnvironment(env, 1);
        assertThat(p.world()).isEqualTo(new World(3, 8, 1));
        assertThat(p.node()).isEqualTo(2);
        assertThat(p.rank()).as("8 ranks share this pod: which one is this process is torchrun's to say").isEqualTo(-1);
        assertThat(p.source()).isEqualTo("kubeflow");
    }

    @Test
    void kubeflowPodWithOneProcess_isItsNodesOnlyRank() {
        Map<String, String> env = Map.of("WORLD_SIZE", "3", "RANK", "1", "PET_NPROC_PER_NODE", "1", "PET_NODE_RANK", "1", "PET_NNODES", "3");
        Placement p = Placement.fromEnvironment(env, 1);
        assertThat(p.world()).isEqualTo(new World(3, 1, 1));
        assertThat(p.rank()).isEqualTo(1);
    }

    @Test
    void kubeflowPodWithTheDefaultNprocAuto_isOneProcessPerPod_asTheOperatorCountsIt() {
        // training operator >= 1.7 without nprocPerNode: "auto", and WORLD_SIZE = pods x 1
        Map<String, String> env = Map.of("WORLD_SIZE", "4", "RANK", "3", "PET_NPROC_PER_NODE", "auto", "PET_NODE_RANK", "3", "PET_NNODES", "4");
        Placement p = Placement.fromEnvironment(env, 1);
        assertThat(p.world()).isEqualTo(new World(4, 1, 1));
        assertThat(p.node()).isEqualTo(3);
        assertThat(p.rank()).isEqualTo(3);
    }

    @Test
    void olderKubeflowPod_worldSizeAndRankAreNodes() {
        Placement p = Placement.fromEnvironment(Map.of("MASTER_ADDR", "j-master-0", "MASTER_PORT", "23456", "WORLD_SIZE", "4", "RANK", "3"), 1);
        assertThat(p.world()).isEqualTo(new World(4, 1, 1));
        assertThat(p.node()).isEqualTo(3);
        assertThat(p.rank()).isEqualTo(3);
    }

    @Test
    void nothingSet_isOneProcess() {
        Placement p = Placement.fromEnvironment(Map.of("HOME", "/root"), 4);
        assertThat(p.world()).isEqualTo(new World(1, 1, 4));
        assertThat(p.node()).isZero();
        assertThat(p.rank()).isZero();
        assertThat(p.source()).isEqualTo("none");
    }

    @Test
    void refusals_sayWhichVariablesAndWhy() {
        assertThatThrownBy(() -> Placement.fromEnvironment(Map.of("JOB_COMPLETION_INDEX", "3"), 1))
                .hasMessageStartingWith("this process is index 3 of an Indexed Job or JobSet (JOB_COMPLETION_INDEX), but no WORLD_SIZE");
        assertThatThrownBy(() -> Placement.fromEnvironment(Map.of("PET_NNODES", "1:4", "PET_NPROC_PER_NODE", "8"), 1))
                .hasMessageContaining("PET_NNODES is the range 1:4");
        assertThatThrownBy(() -> Placement.fromEnvironment(Map.of("PET_NNODES", "2", "PET_NPROC_PER_NODE", "auto", "PET_NODE_RANK", "0"), 1))
                .hasMessageContaining("PET_NPROC_PER_NODE is 'auto'");
        assertThatThrownBy(() -> Placement.fromEnvironment(Map.of("WORLD_SIZE", "12", "LOCAL_WORLD_SIZE", "8", "RANK", "0"), 1))
                .hasMessageContaining("the same number of ranks on every node");
        Map<String, String> uneven = torchrun(2, 4, 0, 0);
        uneven.put("GROUP_WORLD_SIZE", "3");
        assertThatThrownBy(() -> Placement.fromEnvironment(uneven, 1)).hasMessageStartingWith("GROUP_WORLD_SIZE 3 nodes");
        Map<String, String> shuffled = torchrun(2, 4, 0, 1);
        shuffled.put("RANK", "5");
        assertThatThrownBy(() -> Placement.fromEnvironment(shuffled, 1)).hasMessageContaining("ferry's plans number ranks node by node");
        assertThatThrownBy(() -> Placement.fromEnvironment(Map.of("WORLD_SIZE", "four", "RANK", "0"), 1))
                .hasMessage("WORLD_SIZE must be a whole number of at least 0, not 'four'");
        assertThatThrownBy(() -> Placement.fromEnvironment(Map.of("WORLD_SIZE", "4", "RANK", "4"), 1)).hasMessageContaining("not one of the world's 4 nodes");
    }
}
