package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Xml;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.w3c.dom.Element;

/**
 * Access control lists, as S3 answers them for a bucket whose ACLs are disabled (Object Ownership "bucket owner
 * enforced", the default of every bucket created since April 2023): ferry has one owner and no grants of its own
 * (who may call it is decided by its credentials), so every bucket and object answers its owner's FULL_CONTROL,
 * and an ACL that says the same ({@code private}, {@code bucket-owner-full-control}, or a policy granting the owner
 * FULL_CONTROL and nothing else) is accepted and changes nothing. Any other ACL would promise access ferry does
 * not give: refused with S3's answer for such a bucket, 400 {@code AccessControlListNotSupported}. Stateless.
 */
final class Acls {
    /** The canned ACLs that grant the owner FULL_CONTROL only. */
    private static final Set<String> OWNER_ONLY = Set.of("private", "bucket-owner-full-control");
    private static final String OWNER_TYPE = "CanonicalUser";

    private Acls() {
    }

    /** GetBucketAcl and GetObjectAcl: the owner's FULL_CONTROL. */
    static Reply policy() {
        Xml x = new Xml().openRoot("AccessControlPolicy");
        S3Service.owner(x, "Owner").open("AccessControlList").open("Grant").openTyped("Grantee", OWNER_TYPE)
                .element("ID", S3Service.OWNER).element("DisplayName", S3Service.OWNER).close("Grantee")
                .element("Permission", "FULL_CONTROL").close("Grant").close("AccessControlList");
        return Reply.xml(HttpResponseStatus.OK, x.close("AccessControlPolicy"));
    }

    /**
     * Checks a PutBucketAcl or PutObjectAcl (canned {@code x-amz-acl}, {@code x-amz-grant-*} headers, or an
     * {@code <AccessControlPolicy>} body): it must grant the owner FULL_CONTROL and nobody anything.
     */
    static void checkPut(HttpHeaders headers, byte[] body) throws S3Error {
        checkHeaders(headers);
        String canned = headers.get("x-amz-acl");
        if (body.length > 0) {
            if (canned != null) {
                throw S3Error.badRequest("UnexpectedContent", "This request does not support content: it names a canned ACL and a policy");
            }
            checkPolicy(Xml.parse(body, "AccessControlPolicy"));
        } else if (canned == null) {
            throw S3Error.badRequest("MissingSecurityHeader", "Your request was missing a required header: x-amz-acl, or an AccessControlPolicy body");
        }
    }

    private static void checkHeaders(HttpHeaders headers) throws S3Error {
        String canned = headers.get("x-amz-acl");
        if (canned != null && !OWNER_ONLY.contains(canned.trim().toLowerCase(Locale.ROOT))) {
            throw notSupported("the canned ACL '" + canned.trim() + "'");
        }
        for (String grant : List.of("x-amz-grant-read", "x-amz-grant-write", "x-amz-grant-read-acp", "x-amz-grant-write-acp",
                "x-amz-grant-full-control")) {
            String value = headers.get(grant);
            if (value != null && !(grant.equals("x-amz-grant-full-control") && ownerOnly(value))) {
                throw notSupported(grant);
            }
        }
    }

    private static boolean ownerOnly(String grantees) {
        for (String g : grantees.split(",")) {
            String t = g.trim().replace("\"", "");
            if (!t.equals("id=" + S3Service.OWNER)) {
                return false;
            }
        }
        return true;
    }

    private static void checkPolicy(Element policy) throws S3Error {
        List<Element> lists = Xml.children(policy, "AccessControlList");
        if (lists.size() != 1) {
            throw S3Error.badRequest("MalformedACLError", "The XML you provided was not well-formed or did not validate against our published schema");
        }
        for (Element grant : Xml.children(lists.get(0), "Grant")) {
            List<Element> grantee = Xml.children(grant, "Grantee");
            String permission = Xml.text(grant, "Permission");
            if (grantee.size() != 1 || permission == null) {
                throw S3Error.badRequest("MalformedACLError", "The XML you provided was not well-formed or did not validate against our published schema");
            }
            String type = grantee.get(0).getAttributeNS("http://www.w3.org/2001/XMLSchema-instance", "type");
            if (!OWNER_TYPE.equals(type) || !S3Service.OWNER.equals(Xml.text(grantee.get(0), "ID")) || !permission.equals("FULL_CONTROL")) {
                throw notSupported("a grant of " + permission + " to " + (type.isEmpty() ? "a grantee" : type) + " other than the owner");
            }
        }
    }

    private static S3Error notSupported(String what) {
        return S3Error.badRequest("AccessControlListNotSupported", "The bucket does not allow ACLs: ferry grants its owner FULL_CONTROL "
                + "of everything and nothing to anyone else, so " + what + " cannot be kept");
    }
}
