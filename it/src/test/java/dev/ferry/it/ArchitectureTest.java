package dev.ferry.it;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import dev.ferry.cache.CachingStore;
import dev.ferry.tier.NodeStores;
import dev.ferry.writeback.WriteBackStore;
import dev.ferry.cache.SequentialReadAhead;
import dev.ferry.settings.Setting;
import dev.ferry.store.ObjectStore;
import dev.ferry.tier.TierSettings;
import dev.ferry.time.Clock;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The no-reach-back check: main code of every module on this module's classpath (core, s3, embedded, serve,
 * cli, and mount where the build has it) has no cycles between packages, so each layer calls down and
 * never back (the daemon's front -> jobs -> node, say); the daemon's node depends on none of the layers above it;
 * the core knows nothing of the AWS SDK, Netty or picocli; nothing but the core defines a tier setting; main code reads
 * time only through a {@link Clock}; and the local tier's engine knows nothing of its {@link CachingStore} wrapper.
 * Modules themselves cannot form cycles (Maven refuses them), so packages are what this watches.
 */
class ArchitectureTest {
    /** Main classes only: not this module's tests, nor another module's test classes or test-jar. */
    private static final ImportOption MAIN_ONLY = location -> ImportOption.Predefined.DO_NOT_INCLUDE_TESTS.includes(location)
            && !location.contains("-tests.jar");

    private static JavaClasses all;
    private static JavaClasses core;
    private static DescribedPredicate<JavaClass> inCore;

    @BeforeAll
    static void importClasses() throws URISyntaxException {
        all = new ClassFileImporter().withImportOption(MAIN_ONLY).importPackages("dev.ferry");
        // the core module's classes: its classes folder in the IDE and under `mvn test`, its jar under `mvn verify`
        String coreLocation = ObjectStore.class.getProtectionDomain().getCodeSource().getLocation().toURI().toString();
        // ArchUnit writes file:///x where the code source says file:/x
        inCore = DescribedPredicate.describe("in the core module",
                c -> c.getSource().map(source -> plainFileUri(source.getUri().toString()).contains(plainFileUri(coreLocation))).orElse(false));
        core = all.that(inCore);
    }

    private static String plainFileUri(String uri) {
        return uri.replace("file:///", "file:/");
    }

    @Test
    void seesTheMainCodeOfEveryModule() {
        assertThat(all.stream().map(c -> c.getPackageName()).distinct())
                .contains("dev.ferry.store", "dev.ferry.cache", "dev.ferry.s3client", "dev.ferry.embedded", "dev.ferry.serve",
                        "dev.ferry.serve.node", "dev.ferry.serve.jobs", "dev.ferry.cli");
        assertThat(all.stream().map(c -> c.getPackageName())).noneMatch(p -> p.equals("dev.ferry.it"));
        if (Runtime.version().feature() >= 22) { // the build has ferry mount from JDK 22 on
            assertThat(all.stream().map(c -> c.getPackageName())).contains("dev.ferry.mount");
        }
        assertThat(core.stream().map(c -> c.getPackageName())).contains("dev.ferry.store", "dev.ferry.cache")
                .noneMatch(p -> p.startsWith("dev.ferry.serve") || p.startsWith("dev.ferry.s3client"));
    }

    @Test
    void packages_haveNoCycles() {
        slices().matching("dev.ferry.(**)").should().beFreeOfCycles().check(all);
    }

    /**
     * A tier setting (cache-size, block-size, first-byte-timeout, write-back-quota...) is a row of core's
     * {@link TierSettings}, which serve and mount add their own rows to: a row with one of its keys defined anywhere
     * else (a second cache-size with its own default, say) is what issue 21 removed.
     */
    @Test
    void nothingButCore_definesATierSetting() {
        Set<String> tierKeys = TierSettings.ALL.stream().map(Setting::key).collect(Collectors.toCollection(TreeSet::new));
        ArchCondition<JavaField> notATierSetting = new ArchCondition<>("not define a tier setting (" + String.join(", ", tierKeys)
                + "): use TierSettings' row") {
            @Override
            public void check(JavaField field, ConditionEvents events) {
                Field f = field.reflect();
                if (!Modifier.isStatic(f.getModifiers())) {
                    return;
                }
                Object value;
                try {
                    f.setAccessible(true);
                    value = f.get(null);
                } catch (IllegalAccessException | RuntimeException e) {
                    events.add(SimpleConditionEvent.violated(field, field.getFullName() + " cannot be read: " + e));
                    return;
                }
                if (value instanceof Setting<?> s && tierKeys.contains(s.key()) && !TierSettings.ALL.contains(s)) {
                    events.add(SimpleConditionEvent.violated(field, field.getFullName() + " defines " + s.key()
                            + ", a tier setting: use TierSettings' row (core); a command adds only its own rows to TierSettings.ROWS"));
                }
            }
        };
        fields().that().haveRawType(Setting.class).and().areDeclaredInClassesThat(DescribedPredicate.not(inCore))
                .should(notATierSetting).check(all);
    }

    /**
     * Time is read through an injected {@link Clock} (issue 21), so a test can hand a component a clock it moves
     * itself instead of sleeping; only the clock's own implementation asks the JVM.
     */
    @Test
    void mainCode_readsTimeOnlyThroughAClock() {
        noClasses().that().doNotImplement(Clock.class)
                .should().callMethod(System.class, "nanoTime")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(Instant.class, "now")
                .because("time is read through an injected dev.ferry.time.Clock (Clock.system() at the composition root)")
                .check(all);
    }

    /**
     * The local tier is a thin {@link ObjectStore} wrapper ({@link CachingStore}) over an engine (the block cache, its
     * index, fetcher, streams, recovery and verifier) that never calls back up into it (issue 21). Read-ahead sits
     * above the wrapper, as the plan's prefetcher does, and may use it.
     */
    @Test
    void theLocalTiersEngine_knowsNothingOfItsWrapper() {
        noClasses().that().resideInAPackage("dev.ferry.cache..")
                .and(DescribedPredicate.describe("not the wrapper or the read-aheads over it",
                        (JavaClass c) -> !c.getName().startsWith(CachingStore.class.getName())
                                && !c.getName().startsWith(SequentialReadAhead.class.getName())
                                && !c.getName().startsWith("dev.ferry.cache.FolderReadAhead"))) // package-private, beside it
                .should().dependOnClassesThat().belongToAnyOf(CachingStore.class)
                .because("the engine is composed by the wrapper and never reaches back up into it")
                .check(all);
    }

    /**
     * The daemon's S3 semantics and the mount's file system reach the node's stores through one door
     * ({@link NodeStores}), which alone decides whether scratch, write-back, the local tier or the store below
     * answers; the local tier's hints and write-back's state are behind its narrow handles.
     */
    @Test
    void theFrontEnds_reachTheStoresOnlyThroughTheDoor() {
        noClasses().that().resideInAnyPackage("dev.ferry.serve.front..", "dev.ferry.serve.protocol..", "dev.ferry.serve.s3..",
                        "dev.ferry.mount..")
                .should().dependOnClassesThat().belongToAnyOf(CachingStore.class, WriteBackStore.class)
                .because("which store answers is decided in one place, NodeStores; the front ends ask it")
                .check(all);
    }

    /**
     * The daemon's node is a port the layers above it call into (issue 21): it knows nothing of the jobs that plan its
     * reads, nor of the S3 semantics, the front or the daemon. What it needs from the jobs is an interface of its own
     * ({@code BlockHolders}), which they implement. The cycle check finds an arrow up only while another runs down;
     * this rule states the direction itself.
     */
    @Test
    void node_knowsNothingOfTheLayersAboveIt() {
        noClasses().that().resideInAPackage("dev.ferry.serve.node..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ferry.serve.jobs..", "dev.ferry.serve.s3..", "dev.ferry.serve.front..",
                        "dev.ferry.serve")
                .because("the node is a port: the jobs, the S3 semantics and the front call down into it, and what it asks of the jobs "
                        + "is its own interface (BlockHolders)")
                .check(all);
    }

    @Test
    void core_knowsNothingOfTheSdkNettyOrPicocli() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("software.amazon..", "io.netty..", "picocli..")
                .because("the core is the interfaces, the chain, the cache, plans and the loader; adapters live in their own modules")
                .check(core);
    }
}
