"""ferry's S3 conformance checks, with boto3 against a running `ferry serve`: one call or short sequence per
point of what clients expect of an S3 endpoint (issue 12), each asserted. Usage:

    python3 s3_conformance.py http://127.0.0.1:PORT BUCKET [folder|write-back|s3]

The third argument names what is behind the daemon (default folder): over an S3 upstream, checks that are the
upstream's own (a Complete naming a part checksum that is not the part's) are left to it. Prints `ok <point>` per point and `conformance ok` at the end; exits 1 with `FAILED <point>: why` at the
first failure. Buckets under BUCKET-* are created and deleted. Virtual-hosted style needs names under
`localhost` to resolve to loopback: this script resolves them itself (many resolvers do not).
"""
import base64
import datetime
import hashlib
import io
import socket
import sys
import time
import zlib

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, bucket = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "folder"
config = Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"})
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", config=config)
current = "setup"


def check(ok, why):
    if not ok:
        print(f"FAILED {current}: {why}", file=sys.stderr)
        sys.exit(1)


def point(name):
    global current
    current = name


def done():
    print("ok " + current)


def error(call, **kwargs):
    """The ClientError a call raises, as (HTTP status, code); fails the point when it succeeds."""
    try:
        call(**kwargs)
    except ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]
    check(False, f"{call.__name__}({kwargs}) succeeded, expected an error")


def settle():
    """Under write-back, waits for the writes acknowledged so far to be uploaded (the flush fence): a listing shows
    them only then (issue 20 item 6). Elsewhere a write is listed as soon as it is answered."""
    if mode == "write-back":
        import urllib.request
        urllib.request.urlopen(urllib.request.Request(endpoint + "/_ferry/v1/flush?timeout_ms=60000", method="POST"), timeout=90).read()


def read(key, b=None, **kwargs):
    return s3.get_object(Bucket=b or bucket, Key=key, **kwargs)["Body"].read()


started = datetime.datetime.now(datetime.timezone.utc)
s3.create_bucket(Bucket=bucket)

point("empty PUT stores the empty object")
s3.put_object(Bucket=bucket, Key="empty", Body=b"")
check(read("empty") == b"", "the empty object read back bytes")
check(s3.head_object(Bucket=bucket, Key="empty")["ContentLength"] == 0, "HEAD gave a length")
done()

point("a Range starting at or past the end is 416 InvalidRange")
s3.put_object(Bucket=bucket, Key="ten", Body=b"0123456789")
check(error(s3.get_object, Bucket=bucket, Key="ten", Range="bytes=10-") == (416, "InvalidRange"), "bytes=10- of 10 bytes")
check(read("ten", Range="bytes=9-") == b"9", "bytes=9- of 10 bytes")
done()

point("DeleteObjects keeps spaces in keys")
spaced = [" ", "sp/a ", "sp/ lead", "sp/_"]
for k in spaced:
    s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
settle()
result = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in spaced[:3]]})
check(sorted(d["Key"] for d in result.get("Deleted", [])) == sorted(spaced[:3]), f"deleted {result.get('Deleted')}")
left = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="sp/").get("Contents", [])]
check(left == ["sp/_"], f"left {left}")
error_code = error(s3.head_object, Bucket=bucket, Key=" ")
check(error_code[0] == 404, f"the key of one space is still there: {error_code}")
done()

point("a versionId other than null is refused, never acted on")
check(error(s3.get_object, Bucket=bucket, Key="ten", VersionId="v1") == (501, "NotImplemented"), "GET ?versionId=v1")
check(error(s3.delete_object, Bucket=bucket, Key="ten", VersionId="v1") == (501, "NotImplemented"), "DELETE ?versionId=v1")
check(read("ten") == b"0123456789", "the object changed")
done()

point("conditional writes: If-None-Match * and If-Match answer 412 when they fail")
s3.put_object(Bucket=bucket, Key="lock", Body=b"v1", IfNoneMatch="*")
check(error(s3.put_object, Bucket=bucket, Key="lock", Body=b"v2", IfNoneMatch="*") == (412, "PreconditionFailed"), "If-None-Match: *")
check(error(s3.put_object, Bucket=bucket, Key="lock", Body=b"v2", IfMatch='"not-it"') == (412, "PreconditionFailed"), "If-Match")
etag = s3.head_object(Bucket=bucket, Key="lock")["ETag"]
s3.put_object(Bucket=bucket, Key="lock", Body=b"v3", IfMatch=etag)
check(read("lock") == b"v3", "the write under a matching If-Match did not land")
done()

point("response-* overrides set the answer's headers")
r = s3.get_object(Bucket=bucket, Key="ten", ResponseContentType="text/plain", ResponseContentDisposition='attachment; filename="t.txt"',
                  ResponseCacheControl="no-cache")
check(r["ContentType"] == "text/plain", "Content-Type " + r["ContentType"])
check(r["ContentDisposition"] == 'attachment; filename="t.txt"', "Content-Disposition " + str(r.get("ContentDisposition")))
check(r["CacheControl"] == "no-cache", "Cache-Control " + str(r.get("CacheControl")))
done()

point("If-Modified-Since a later date is 304, If-Unmodified-Since an earlier one 412")
later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
earlier = started - datetime.timedelta(hours=1)
check(error(s3.get_object, Bucket=bucket, Key="ten", IfModifiedSince=later)[0] == 304, "If-Modified-Since")
check(error(s3.get_object, Bucket=bucket, Key="ten", IfUnmodifiedSince=earlier) == (412, "PreconditionFailed"), "If-Unmodified-Since")
check(read("ten", IfModifiedSince=earlier) == b"0123456789", "If-Modified-Since an earlier date")
done()

point("CopyObject copies the bytes (metadata directive COPY), and refuses a copy onto itself")
copied = s3.copy_object(Bucket=bucket, Key="ten-copy", CopySource={"Bucket": bucket, "Key": "ten"})
check(copied["CopyObjectResult"]["ETag"], "no ETag in CopyObjectResult")
check(read("ten-copy") == b"0123456789", "the copy reads back other bytes")
check(error(s3.copy_object, Bucket=bucket, Key="ten", CopySource={"Bucket": bucket, "Key": "ten"})[0] == 400, "a copy onto itself")
s3.copy_object(Bucket=bucket, Key="ten", CopySource={"Bucket": bucket, "Key": "ten"}, MetadataDirective="REPLACE")
check(error(s3.copy_object, Bucket=bucket, Key="x", CopySource={"Bucket": bucket, "Key": "missing"}) == (404, "NoSuchKey"), "missing source")
done()

point("UploadPartCopy: the whole source without a range, the range with one; boto3's managed copy")
big = bytes(range(256)) * (24 * 1024)  # 6 MiB
s3.put_object(Bucket=bucket, Key="big", Body=big)
upload = s3.create_multipart_upload(Bucket=bucket, Key="joined")["UploadId"]
p1 = s3.upload_part_copy(Bucket=bucket, Key="joined", UploadId=upload, PartNumber=1, CopySource={"Bucket": bucket, "Key": "big"})
p2 = s3.upload_part_copy(Bucket=bucket, Key="joined", UploadId=upload, PartNumber=2, CopySource={"Bucket": bucket, "Key": "big"},
                         CopySourceRange="bytes=10-19")
check(error(s3.upload_part_copy, Bucket=bucket, Key="joined", UploadId=upload, PartNumber=3, CopySource={"Bucket": bucket, "Key": "big"},
            CopySourceRange=f"bytes=0-{len(big)}") == (416, "InvalidRange"), "a range past the source's end")
check(error(s3.upload_part_copy, Bucket=bucket, Key="joined", UploadId=upload, PartNumber=3, CopySource={"Bucket": bucket, "Key": "big"},
            CopySourceRange="bytes=20-10") == (400, "InvalidArgument"), "a range that ends before it starts")
s3.complete_multipart_upload(Bucket=bucket, Key="joined", UploadId=upload, MultipartUpload={"Parts": [
    {"PartNumber": 1, "ETag": p1["CopyPartResult"]["ETag"]}, {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]}]})
check(read("joined") == big + big[10:20], "the joined object differs")
s3.copy({"Bucket": bucket, "Key": "big"}, bucket, "big-copy",
        Config=TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024))
check(read("big-copy") == big, "boto3's managed (multipart) copy differs")
done()

point("checksums: a PUT's is kept, answered on GET and HEAD when asked (x-amz-checksum-mode), not for a range")
hello_sha = base64.b64encode(hashlib.sha256(b"hello").digest()).decode()
put = s3.put_object(Bucket=bucket, Key="sum/sha", Body=b"hello", ChecksumAlgorithm="SHA256")
check(put.get("ChecksumSHA256") == hello_sha, f"PutObject answered {put.get('ChecksumSHA256')}")
head = s3.head_object(Bucket=bucket, Key="sum/sha", ChecksumMode="ENABLED")
check(head.get("ChecksumSHA256") == hello_sha and head.get("ChecksumType") == "FULL_OBJECT", f"HEAD answered {head.get('ChecksumSHA256')}")
check("ChecksumSHA256" not in s3.head_object(Bucket=bucket, Key="sum/sha"), "HEAD without x-amz-checksum-mode named the checksum")
got = s3.get_object(Bucket=bucket, Key="sum/sha", ChecksumMode="ENABLED")  # boto3 checks the bytes against it
check(got["Body"].read() == b"hello" and got.get("ChecksumSHA256") == hello_sha, "GET with x-amz-checksum-mode")
check("ChecksumSHA256" not in s3.get_object(Bucket=bucket, Key="sum/sha", Range="bytes=0-1", ChecksumMode="ENABLED"), "a range's GET")
s3.put_object(Bucket=bucket, Key="sum/default", Body=b"hello")  # boto3 sends a CRC32 unasked (when_supported)
crc = base64.b64encode(zlib.crc32(b"hello").to_bytes(4, "big")).decode()
check(s3.head_object(Bucket=bucket, Key="sum/default", ChecksumMode="ENABLED").get("ChecksumCRC32") == crc, "boto3's default CRC32")
done()

point("checksums of a multipart upload: S3's composite of the parts' (base64(crc32(part crc32s))-N)")
parts = [b"p" * (5 * 1024 * 1024), b"q" * 1000]
created = s3.create_multipart_upload(Bucket=bucket, Key="sum/mp", ChecksumAlgorithm="CRC32")
check(created.get("ChecksumAlgorithm") == "CRC32" and created.get("ChecksumType") == "COMPOSITE", f"Create answered {created}")
uploaded = [s3.upload_part(Bucket=bucket, Key="sum/mp", UploadId=created["UploadId"], PartNumber=n + 1, Body=p, ChecksumAlgorithm="CRC32")
            for n, p in enumerate(parts)]
raw = b"".join(zlib.crc32(p).to_bytes(4, "big") for p in parts)
check([u.get("ChecksumCRC32") for u in uploaded] == [base64.b64encode(zlib.crc32(p).to_bytes(4, "big")).decode() for p in parts],
      "UploadPart's checksums")
composite = base64.b64encode(zlib.crc32(raw).to_bytes(4, "big")).decode() + "-2"
completed = s3.complete_multipart_upload(Bucket=bucket, Key="sum/mp", UploadId=created["UploadId"], MultipartUpload={"Parts": [
    {"PartNumber": n + 1, "ETag": u["ETag"], "ChecksumCRC32": u["ChecksumCRC32"]} for n, u in enumerate(uploaded)]})
check(completed.get("ChecksumCRC32") == composite, f"Complete answered {completed.get('ChecksumCRC32')}, S3 computes {composite}")
head = s3.head_object(Bucket=bucket, Key="sum/mp", ChecksumMode="ENABLED")
check(head.get("ChecksumCRC32") == composite and head.get("ChecksumType") == "COMPOSITE", f"HEAD answered {head.get('ChecksumCRC32')}")
if mode != "s3":  # over S3 the upstream checks these (s3proxy, the embedded store, does not)
    lied = s3.create_multipart_upload(Bucket=bucket, Key="sum/lied", ChecksumAlgorithm="SHA256")["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key="sum/lied", UploadId=lied, PartNumber=1, Body=b"x", ChecksumAlgorithm="SHA256")
    other = base64.b64encode(hashlib.sha256(b"y").digest()).decode()
    check(error(s3.complete_multipart_upload, Bucket=bucket, Key="sum/lied", UploadId=lied, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": part["ETag"], "ChecksumSHA256": other}]}) == (400, "InvalidPart"), "a part checksum not the part's")
    s3.abort_multipart_upload(Bucket=bucket, Key="sum/lied", UploadId=lied)
check(error(s3.create_multipart_upload, Bucket=bucket, Key="sum/x", ChecksumAlgorithm="SHA256", ChecksumType="FULL_OBJECT")
      == (400, "InvalidRequest"), "a FULL_OBJECT SHA-256 upload, which S3 cannot make")
done()

point("GET ?partNumber=N reads part N (Content-Range, PartsCount); part 1 of an object PUT whole is all of it")
whole = s3.get_object(Bucket=bucket, Key="sum/sha", PartNumber=1)
check(whole["Body"].read() == b"hello" and "PartsCount" not in whole, "part 1 of a one-part object")
check(error(s3.get_object, Bucket=bucket, Key="sum/sha", PartNumber=2) == (400, "InvalidPart"), "part 2 of a one-part object")
if mode == "s3":  # s3proxy, the embedded store, does not say where its parts lie
    check(error(s3.get_object, Bucket=bucket, Key="sum/mp", PartNumber=2)[0] == 501, "a part over the embedded store")
else:
    for n, p in enumerate(parts):
        got = s3.get_object(Bucket=bucket, Key="sum/mp", PartNumber=n + 1)
        check(got["Body"].read() == p and got["PartsCount"] == 2, f"part {n + 1}")
        check(s3.head_object(Bucket=bucket, Key="sum/mp", PartNumber=n + 1)["ContentLength"] == len(p), f"HEAD of part {n + 1}")
    check(error(s3.get_object, Bucket=bucket, Key="sum/mp", PartNumber=3) == (400, "InvalidPart"), "part 3 of two")
done()

point("GetObjectAttributes: ETag, Checksum, ObjectParts, StorageClass, ObjectSize")
every = ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"]
one = s3.get_object_attributes(Bucket=bucket, Key="sum/sha", ObjectAttributes=every)
check(one["ETag"] == hashlib.md5(b"hello").hexdigest() and one["ObjectSize"] == 5 and one["StorageClass"] == "STANDARD", f"{one}")
check(one["Checksum"].get("ChecksumSHA256") == hello_sha and "ObjectParts" not in one, f"{one}")
multi = s3.get_object_attributes(Bucket=bucket, Key="sum/mp", ObjectAttributes=every)
check(multi["ObjectParts"]["TotalPartsCount"] == 2 and multi["Checksum"].get("ChecksumCRC32") == composite, f"{multi}")
check(multi["ObjectSize"] == sum(len(p) for p in parts) and multi["ETag"].endswith("-2"), f"{multi}")
if mode != "s3":  # where ferry assembles an upload it keeps its parts (over S3, GetObjectAttributes' parts are the upstream's)
    listed_parts = [(p["PartNumber"], p["Size"], p.get("ChecksumCRC32")) for p in multi["ObjectParts"].get("Parts", [])]
    check(listed_parts == [(n + 1, len(p), u["ChecksumCRC32"]) for n, (p, u) in enumerate(zip(parts, uploaded))], f"parts {listed_parts}")
check(error(s3.get_object_attributes, Bucket=bucket, Key="missing", ObjectAttributes=every)[0] == 404, "a missing key")
done()

point("ACLs: the owner's FULL_CONTROL; a canned private is accepted, other ACLs are AccessControlListNotSupported")
for acl in (s3.get_bucket_acl(Bucket=bucket), s3.get_object_acl(Bucket=bucket, Key="sum/sha")):
    check([(g["Grantee"]["Type"], g["Grantee"]["ID"], g["Permission"]) for g in acl["Grants"]] == [("CanonicalUser", acl["Owner"]["ID"],
                                                                                                     "FULL_CONTROL")], f"{acl['Grants']}")
s3.put_bucket_acl(Bucket=bucket, ACL="private")
s3.put_object_acl(Bucket=bucket, Key="sum/sha", ACL="private")
policy = s3.get_object_acl(Bucket=bucket, Key="sum/sha")
s3.put_object_acl(Bucket=bucket, Key="sum/sha", AccessControlPolicy={"Owner": policy["Owner"], "Grants": policy["Grants"]})
check(error(s3.put_object_acl, Bucket=bucket, Key="sum/sha", ACL="public-read") == (400, "AccessControlListNotSupported"), "public-read")
check(error(s3.put_bucket_acl, Bucket=bucket, GrantRead='uri="http://acs.amazonaws.com/groups/global/AllUsers"')
      == (400, "AccessControlListNotSupported"), "a grant to everyone")
check(error(s3.get_object_acl, Bucket=bucket, Key="missing") == (404, "NoSuchKey"), "the ACL of a missing key")
done()

point("ListBuckets pages by MaxBuckets with a ContinuationToken, and takes a Prefix")
extra = [bucket + "-lb1", bucket + "-lb2"]
for b in extra:
    s3.create_bucket(Bucket=b)
names, token, pages = [], None, 0
while True:
    page = s3.list_buckets(MaxBuckets=1, Prefix=bucket, **({"ContinuationToken": token} if token else {}))
    pages += 1
    names += [b["Name"] for b in page["Buckets"]]
    token = page.get("ContinuationToken")
    if not token:
        break
check(names == sorted([bucket] + extra) and pages >= 3, f"{names} in {pages} pages")
for b in extra:
    s3.delete_bucket(Bucket=b)
done()

point("ListObjectsV2: fetch-owner names the owner; an empty continuation token lists from the start")
settle()
listed = s3.list_objects_v2(Bucket=bucket, Prefix="sum/", FetchOwner=True)
check(all(o.get("Owner", {}).get("ID") for o in listed["Contents"]), "an object without its Owner")
check(all("Owner" not in o for o in s3.list_objects_v2(Bucket=bucket, Prefix="sum/")["Contents"]), "an Owner not asked for")
check(s3.list_objects_v2(Bucket=bucket, Prefix="sum/", ContinuationToken="")["KeyCount"] == listed["KeyCount"], "an empty token")
if mode != "s3":  # over S3 a listing names what the upstream lists (s3proxy, the embedded store, names no algorithm)
    check(any(o.get("ChecksumAlgorithm") == ["SHA256"] for o in listed["Contents"]), "a listing names no ChecksumAlgorithm")
done()

point("CompleteMultipartUpload without a body is 400 MalformedXML")
bare = s3.create_multipart_upload(Bucket=bucket, Key="bare")["UploadId"]
check(error(s3.complete_multipart_upload, Bucket=bucket, Key="bare", UploadId=bare) == (400, "MalformedXML"), "no body")
done()

point("ListMultipartUploads finds an upload in progress, and AbortMultipartUpload ends it")
found = s3.list_multipart_uploads(Bucket=bucket, Prefix="bare").get("Uploads", [])
check([(u["Key"], u["UploadId"]) for u in found] == [("bare", bare)], f"listed {found}")
s3.abort_multipart_upload(Bucket=bucket, Key="bare", UploadId=bare)
check(s3.list_multipart_uploads(Bucket=bucket, Prefix="bare").get("Uploads", []) == [], "still listed after the abort")
done()

point("ListObjectVersions: each object is its one version, null and latest, page by page")
settle()
versions, pages = [], 0
for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, PaginationConfig={"PageSize": 3}):
    pages += 1
    versions += page.get("Versions", [])
keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
check([v["Key"] for v in versions] == keys, f"versions {[v['Key'] for v in versions]} != keys {keys}")
check(pages == (len(keys) + 2) // 3, f"{len(keys)} keys in {pages} pages of 3")
check(all(v["VersionId"] == "null" and v["IsLatest"] for v in versions), "a version is not null/latest")
check(read("ten", VersionId="null") == b"0123456789", "GET ?versionId=null")
done()

point("ListBuckets reports real creation dates")
created = {b["Name"]: b["CreationDate"] for b in s3.list_buckets()["Buckets"]}
check(bucket in created, f"{bucket} not listed")
check(abs((created[bucket] - started).total_seconds()) < 600, f"{bucket} created {created[bucket]}, the script started {started}")
done()

point("DeleteBucket: 409 BucketNotEmpty while it holds objects, 204 once emptied (as tools clean up)")
settle()
check(error(s3.delete_bucket, Bucket=bucket) == (409, "BucketNotEmpty"), "DeleteBucket of a bucket with objects")
check(read("ten") == b"0123456789", "DeleteBucket of a non-empty bucket removed objects")
boto3.resource("s3", endpoint_url=endpoint, region_name="us-east-1", config=config).Bucket(bucket).object_versions.delete()
r = s3.delete_bucket(Bucket=bucket)
check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, f"DeleteBucket answered {r['ResponseMetadata']['HTTPStatusCode']}")
check(bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]], "the bucket is still listed")
check(error(s3.head_bucket, Bucket=bucket)[0] == 404, "HeadBucket of the deleted bucket")
done()

point("DELETE and GET of a key in a deleted bucket are 404 NoSuchBucket")
check(error(s3.delete_object, Bucket=bucket, Key="ten") == (404, "NoSuchBucket"), "DELETE")
check(error(s3.get_object, Bucket=bucket, Key="ten") == (404, "NoSuchBucket"), "GET")
check(error(s3.delete_objects, Bucket=bucket, Delete={"Objects": [{"Key": "ten"}]}) == (404, "NoSuchBucket"), "DeleteObjects")
done()

point("a missing multipart upload is NoSuchUpload")
s3.create_bucket(Bucket=bucket)
check(error(s3.abort_multipart_upload, Bucket=bucket, Key="k", UploadId="no-such-upload") == (404, "NoSuchUpload"), "AbortMultipartUpload")
done()

point("virtual-hosted style: Host BUCKET.localhost addresses the bucket")
resolve = socket.getaddrinfo


def loopback_for_localhost(host, *args, **kwargs):
    if isinstance(host, str) and (host == "localhost" or host.endswith(".localhost")):
        host = "127.0.0.1"
    return resolve(host, *args, **kwargs)


socket.getaddrinfo = loopback_for_localhost
port = endpoint.rsplit(":", 1)[1]
vhost = boto3.client("s3", endpoint_url=f"http://localhost:{port}", region_name="us-east-1",
                     config=Config(retries={"max_attempts": 1}, s3={"addressing_style": "virtual"}))
sent_hosts = []
vhost.meta.events.register("before-send.s3", lambda request, **kw: sent_hosts.append(request.url.split("/")[2]) and None)
vhost.put_object(Bucket=bucket, Key="vh/key", Body=b"virtual")
check(read("vh/key") == b"virtual", "path style reads other bytes")
check(vhost.get_object(Bucket=bucket, Key="vh/key")["Body"].read() == b"virtual", "virtual-hosted GET")
settle()
check([o["Key"] for o in vhost.list_objects_v2(Bucket=bucket).get("Contents", [])] == ["vh/key"], "virtual-hosted listing")
check(sent_hosts and all(h == f"{bucket}.localhost:{port}" for h in sent_hosts), f"boto3 sent to hosts {sent_hosts}")
socket.getaddrinfo = resolve
s3.delete_object(Bucket=bucket, Key="vh/key")
s3.delete_bucket(Bucket=bucket)
done()

print("conformance ok")
