#!/usr/bin/env python3
"""Writes botocore.json: requests signed with Signature Version 2 by
botocore (the signer of boto3 and the aws CLI), presigned and in the
Authorization header, for TestBotocoreV2 to verify.

    python3 gen_botocore.py > botocore.json

Each request is captured as botocore would send it (method, URL, headers)
without being sent. "now" is a time at which it is valid.
"""
import json
import time
from email.utils import parsedate_to_datetime

import boto3
import botocore
from botocore.config import Config

AK = "AKIDEXAMPLE"
SK = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


def client():
    return boto3.client(
        "s3", endpoint_url="http://127.0.0.1:9000", region_name="us-east-1",
        aws_access_key_id=AK, aws_secret_access_key=SK,
        config=Config(signature_version="s3", s3={"addressing_style": "path"},
                      retries={"max_attempts": 1}))


class Captured(Exception):
    pass


def signed(op, **params):
    """The request botocore signs for op, stopped before it is sent."""
    c = client()
    got = {}

    def capture(request, **kwargs):
        got["method"] = request.method
        got["url"] = request.url
        got["headers"] = {k: v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()}
        raise Captured()

    c.meta.events.register("before-send.s3", capture)
    try:
        getattr(c, op)(**params)
    except Captured:
        pass
    now = int(parsedate_to_datetime(got["headers"]["Date"]).timestamp())
    return {"name": "header " + op, "method": got["method"], "url": got["url"],
            "headers": got["headers"], "now": now}


def presigned(op, **params):
    url = client().generate_presigned_url(op, Params=params, ExpiresIn=3600)
    method = {"put_object": "PUT", "delete_object": "DELETE"}.get(op, "GET")
    return {"name": "presigned " + op, "method": method, "url": url, "headers": {},
            "now": int(time.time())}


cases = [
    presigned("list_objects_v2", Bucket="bkt", Prefix="a b/", MaxKeys=5, Delimiter="/"),
    presigned("list_objects", Bucket="bkt"),
    presigned("list_buckets"),
    presigned("get_bucket_location", Bucket="bkt"),
    presigned("get_bucket_acl", Bucket="bkt"),
    presigned("get_bucket_encryption", Bucket="bkt"),
    presigned("get_object_lock_configuration", Bucket="bkt"),
    presigned("get_object", Bucket="bkt", Key="a b/c+d~e.txt"),
    presigned("get_object", Bucket="bkt", Key="k", VersionId="3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY",
              ResponseContentType="text/plain"),
    presigned("get_object_retention", Bucket="bkt", Key="k"),
    presigned("put_object", Bucket="bkt", Key="upload/x"),
    presigned("delete_object", Bucket="bkt", Key="x"),
    signed("list_objects_v2", Bucket="bkt", Prefix="p/"),
    signed("head_bucket", Bucket="bkt"),
    signed("create_bucket", Bucket="bkt"),
    signed("get_bucket_versioning", Bucket="bkt"),
    signed("get_bucket_encryption", Bucket="bkt"),
    signed("put_object", Bucket="bkt", Key="k v", Body=b"hello", ContentType="text/plain",
           Metadata={"spaced": "a  b", "z": "1"}),
    signed("get_object", Bucket="bkt", Key="k", Range="bytes=0-1"),
    signed("restore_object", Bucket="bkt", Key="k", RestoreRequest={"Days": 1}),
]
print(json.dumps({"botocore": botocore.__version__, "cases": cases}, indent=1))
