"""ferry's S3 conformance checks, with boto3 against a running `ferry serve`: one call or short sequence per
point of what clients expect of an S3 endpoint (issue 12), each asserted. Usage:

    python3 s3_conformance.py http://127.0.0.1:PORT BUCKET

Prints `ok <point>` per point and `conformance ok` at the end; exits 1 with `FAILED <point>: why` at the
first failure. Buckets under BUCKET-* are created and deleted. Virtual-hosted style needs names under
`localhost` to resolve to loopback: this script resolves them itself (many resolvers do not).
"""
import datetime
import io
import socket
import sys
import time

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, bucket = sys.argv[1], sys.argv[2]
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
            CopySourceRange=f"bytes=0-{len(big)}") == (400, "InvalidArgument"), "a range past the source's end")
s3.complete_multipart_upload(Bucket=bucket, Key="joined", UploadId=upload, MultipartUpload={"Parts": [
    {"PartNumber": 1, "ETag": p1["CopyPartResult"]["ETag"]}, {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]}]})
check(read("joined") == big + big[10:20], "the joined object differs")
s3.copy({"Bucket": bucket, "Key": "big"}, bucket, "big-copy",
        Config=TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024))
check(read("big-copy") == big, "boto3's managed (multipart) copy differs")
done()

point("ListObjectVersions: each object is its one version, null and latest, page by page")
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
check(error(s3.delete_bucket, Bucket=bucket) == (409, "BucketNotEmpty"), "DeleteBucket of a bucket with objects")
check(read("ten") == b"0123456789", "DeleteBucket of a non-empty bucket removed objects")
boto3.resource("s3", endpoint_url=endpoint, region_name="us-east-1", config=config).Bucket(bucket).object_versions.delete()
r = s3.delete_bucket(Bucket=bucket)
check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, f"DeleteBucket answered {r['ResponseMetadata']['HTTPStatusCode']}")
check(bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]], "the bucket is still listed")
check(error(s3.head_bucket, Bucket=bucket)[0] == 404, "HeadBucket of the deleted bucket")
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
check([o["Key"] for o in vhost.list_objects_v2(Bucket=bucket)["Contents"]] == ["vh/key"], "virtual-hosted listing")
check(sent_hosts and all(h == f"{bucket}.localhost:{port}" for h in sent_hosts), f"boto3 sent to hosts {sent_hosts}")
socket.getaddrinfo = resolve
s3.delete_object(Bucket=bucket, Key="vh/key")
s3.delete_bucket(Bucket=bucket)
done()

print("conformance ok")
