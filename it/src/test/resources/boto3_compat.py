"""boto3 against `ferry serve`, as a user would: paginated listing of 2,500 keys, a ranged GET, and a
100 MiB multipart upload read back byte for byte. Exits non-zero with a message on any mismatch."""
import concurrent.futures
import hashlib
import os
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config

endpoint, bucket = sys.argv[1], sys.argv[2]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  config=Config(max_pool_connections=16, retries={"max_attempts": 1}))


def check(ok, what):
    if not ok:
        print("FAILED: " + what, file=sys.stderr)
        sys.exit(1)


s3.create_bucket(Bucket=bucket)
keys = [f"many/{i:05d}.txt" for i in range(2500)]
with concurrent.futures.ThreadPoolExecutor(16) as pool:
    list(pool.map(lambda k: s3.put_object(Bucket=bucket, Key=k, Body=k.encode()), keys))
listed, pages = [], 0
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="many/"):
    pages += 1
    listed += [o["Key"] for o in page.get("Contents", [])]
check(listed == keys, f"listing gave {len(listed)} keys in {pages} pages, expected the 2500 keys in order")
check(pages == 3, f"2500 keys came in {pages} pages, expected 3 of at most 1000")

body = s3.get_object(Bucket=bucket, Key="many/01234.txt", Range="bytes=5-9")
check(body["Body"].read() == b"01234", "ranged GET returned the wrong bytes")
check(body["ContentRange"] == "bytes 5-9/14", "Content-Range was " + body["ContentRange"])

data = os.urandom(100 * 1024 * 1024)
with open(sys.argv[3], "wb") as f:
    f.write(data)
cfg = TransferConfig(multipart_threshold=8 * 1024 * 1024, multipart_chunksize=8 * 1024 * 1024, max_concurrency=4)
s3.upload_file(sys.argv[3], bucket, "big/100MiB.bin", Config=cfg)
head = s3.head_object(Bucket=bucket, Key="big/100MiB.bin")
check(head["ContentLength"] == len(data), "the multipart object has %d bytes" % head["ContentLength"])
got = s3.get_object(Bucket=bucket, Key="big/100MiB.bin")["Body"].read()
check(hashlib.sha256(got).digest() == hashlib.sha256(data).digest(), "the multipart object reads back different bytes")
try:
    s3.get_object(Bucket=bucket, Key="missing")
    check(False, "a missing key was found")
except s3.exceptions.NoSuchKey:
    pass
print("boto3 ok: 2500 keys in 3 pages, ranged get, 100 MiB multipart")
