package dev.ferry.mount;

import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.StoreException;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a failure becomes an errno: Linux values jfuse's {@code Errno} does not name, and the mapping of
 * store failures ({@link #of}). Every operation of {@link FerryFs} that reaches the store goes through
 * {@link #fail}, which logs what a user should see in the mount's log (EIO, ESTALE, EBUSY) and returns the
 * negated errno libfuse expects.
 */
final class Errnos {
    private static final Logger LOG = LoggerFactory.getLogger(FerryFs.class);

    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EIO = 5;
    static final int EBADF = 9;
    static final int EACCES = 13;
    static final int EBUSY = 16;
    static final int EEXIST = 17;
    static final int EXDEV = 18;
    static final int EISDIR = 21;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EROFS = 30;
    static final int ENOSYS = 38;
    static final int ENOTEMPTY = 39;
    static final int EOPNOTSUPP = 95;
    static final int ESTALE = 116;

    private Errnos() {
    }

    /** A delete refused because the key's write has not reached the store yet (EBUSY). */
    static final class UploadPending extends IOException {
        private static final long serialVersionUID = 1L;

        UploadPending(String message) {
            super(message);
        }
    }

    /** The errno of a store failure: not found ENOENT, a pinned version gone ESTALE, refused EACCES, full ENOSPC, else EIO. */
    static int of(IOException e) {
        if (e instanceof ObjectNotFoundException) {
            return ENOENT;
        }
        if (e instanceof UploadPending) {
            return EBUSY;
        }
        if (e instanceof StoreException se) {
            if (se.kind() == StoreException.Kind.PRECONDITION_FAILED || se.httpStatus() == 412) {
                return ESTALE;
            }
            if (se.kind() == StoreException.Kind.ACCESS_DENIED) {
                return EACCES;
            }
            if (se.httpStatus() == 507) {
                return ENOSPC;
            }
            if (se.kind() == StoreException.Kind.NOT_FOUND) {
                return ENOENT;
            }
        }
        return EIO;
    }

    /** {@code -of(e)} for libfuse; logs {@code what} failed when the errno alone would not tell the user why. */
    static int fail(String what, IOException e) {
        int code = of(e);
        if (code == EIO || code == ESTALE || code == EBUSY) {
            LOG.warn("{}: {}", what, e.getMessage());
        }
        return -code;
    }
}
