package dev.ferry.it;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.ferry.store.ObjectStore;
import java.net.URISyntaxException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The no-reach-back check: main code of every module on this module's classpath (core, s3, embedded, serve,
 * cli, and mount where the build has it) has no cycles between packages, so each layer calls down and
 * never back (the daemon's front -> jobs -> node, say); and the core knows nothing of the AWS SDK, Netty or
 * picocli. Modules themselves cannot form cycles (Maven refuses them), so packages are what this watches.
 */
class ArchitectureTest {
    /** Main classes only: not this module's tests, nor another module's test classes or test-jar. */
    private static final ImportOption MAIN_ONLY = location -> ImportOption.Predefined.DO_NOT_INCLUDE_TESTS.includes(location)
            && !location.contains("-tests.jar");

    private static JavaClasses all;
    private static JavaClasses core;

    @BeforeAll
    static void importClasses() throws URISyntaxException {
        all = new ClassFileImporter().withImportOption(MAIN_ONLY).importPackages("dev.ferry");
        // the core module's classes: its classes folder in the IDE and under `mvn test`, its jar under `mvn verify`
        String coreLocation = ObjectStore.class.getProtectionDomain().getCodeSource().getLocation().toURI().toString();
        core = all.that(DescribedPredicate.describe("in the core module",
                c -> c.getSource().map(source -> source.getUri().toString().contains(coreLocation)).orElse(false)));
    }

    @Test
    void seesTheMainCodeOfEveryModule() {
        assertThat(all.stream().map(c -> c.getPackageName()).distinct())
                .contains("dev.ferry.store", "dev.ferry.cache", "dev.ferry.s3", "dev.ferry.embedded", "dev.ferry.serve",
                        "dev.ferry.serve.node", "dev.ferry.serve.jobs", "dev.ferry.cli");
        assertThat(all.stream().map(c -> c.getPackageName())).noneMatch(p -> p.equals("dev.ferry.it"));
        if (Runtime.version().feature() >= 22) { // the build has ferry mount from JDK 22 on
            assertThat(all.stream().map(c -> c.getPackageName())).contains("dev.ferry.mount");
        }
        assertThat(core.stream().map(c -> c.getPackageName())).contains("dev.ferry.store", "dev.ferry.cache")
                .noneMatch(p -> p.startsWith("dev.ferry.serve") || p.startsWith("dev.ferry.s3"));
    }

    @Test
    void packages_haveNoCycles() {
        slices().matching("dev.ferry.(**)").should().beFreeOfCycles().check(all);
    }

    @Test
    void core_knowsNothingOfTheSdkNettyOrPicocli() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("software.amazon..", "io.netty..", "picocli..")
                .because("the core is the interfaces, the chain, the cache, plans and the loader; adapters live in their own modules")
                .check(core);
    }
}
