# boto3 half of integration.TestVersioningBoto3: bucket versioning as
# boto3 drives it. Versions and delete markers made with put_object and
# delete_object, the list_object_versions paginator walked with small
# pages, reads and tags by VersionId, delete_objects naming versions,
# upload_part_copy from an old version, then the bucket emptied with
# bucket.object_versions.delete() and deleted. A second bucket keeps a
# version from before versioning and suspended-mode null versions for
# the Go test's kernel check. Prints one JSON object of observations;
# the Go test judges them.
import json
import os
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, access_key, secret_key, region = sys.argv[1:5]
session = boto3.session.Session(
    aws_access_key_id=access_key, aws_secret_access_key=secret_key, region_name=region)
config = Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1})
s3 = session.client("s3", endpoint_url=endpoint, config=config)
resource = session.resource("s3", endpoint_url=endpoint, config=config)
out = {}


def failure(fn):
    """Runs fn; None when it succeeds, else what the error response said."""
    try:
        fn()
        return None
    except ClientError as e:
        meta = e.response["ResponseMetadata"]
        headers = meta.get("HTTPHeaders", {})
        return {
            "status": meta["HTTPStatusCode"],
            "code": e.response["Error"]["Code"],
            "delete_marker": headers.get("x-amz-delete-marker", ""),
            "version_id": headers.get("x-amz-version-id", ""),
        }


def walk(bucket, page_size):
    """The list_object_versions paginator's pages, each a list of entries
    (its Versions, then its DeleteMarkers: boto3 keeps them apart)."""
    pages = []
    paginator = s3.get_paginator("list_object_versions")
    for page in paginator.paginate(Bucket=bucket, PaginationConfig={"PageSize": page_size}):
        entries = [{"key": v["Key"], "version_id": v["VersionId"], "latest": v["IsLatest"],
                    "marker": False, "size": v["Size"]} for v in page.get("Versions", [])]
        entries += [{"key": m["Key"], "version_id": m["VersionId"], "latest": m["IsLatest"],
                     "marker": True, "size": 0} for m in page.get("DeleteMarkers", [])]
        pages.append(entries)
    return pages


B = "boto-ver"
s3.create_bucket(Bucket=B)
out["state_new"] = s3.get_bucket_versioning(Bucket=B).get("Status", "")
out["mfa_delete"] = failure(lambda: s3.put_bucket_versioning(
    Bucket=B, VersioningConfiguration={"Status": "Enabled", "MFADelete": "Enabled"}))
out["state_after_mfa"] = s3.get_bucket_versioning(Bucket=B).get("Status", "")
s3.put_bucket_versioning(Bucket=B, VersioningConfiguration={"Status": "Enabled"})
out["state_enabled"] = s3.get_bucket_versioning(Bucket=B).get("Status", "")

ids = {}


def put(name, key, body):
    ids[name] = s3.put_object(Bucket=B, Key=key, Body=body).get("VersionId", "")


def delete(name, key):
    r = s3.delete_object(Bucket=B, Key=key)
    ids[name] = r.get("VersionId", "")
    out.setdefault("delete_markers_made", {})[name] = r.get("DeleteMarker", False)


put("a1", "a.txt", b"a one")
put("a2", "a.txt", b"a two!")
put("a3", "a.txt", b"a three")
put("b1", "dir/b.txt", b"b one")
put("b2", "dir/b.txt", b"b two")
delete("bm", "dir/b.txt")
put("c1", "c.txt", b"c one")
delete("cm1", "c.txt")
put("c2", "c.txt", b"c two")
out["ids"] = ids

out["walk2"] = walk(B, 2)
out["walk1"] = walk(B, 1)

r = s3.get_object(Bucket=B, Key="a.txt", VersionId=ids["a1"])
out["get_a1"] = {"body": r["Body"].read().decode(), "version_id": r.get("VersionId", "")}
r = s3.head_object(Bucket=B, Key="a.txt", VersionId=ids["a2"])
out["head_a2"] = {"size": r["ContentLength"], "version_id": r.get("VersionId", "")}
r = s3.get_object(Bucket=B, Key="a.txt")
out["get_a"] = {"body": r["Body"].read().decode(), "version_id": r.get("VersionId", "")}
out["get_latest_marker"] = failure(lambda: s3.get_object(Bucket=B, Key="dir/b.txt"))
out["head_latest_marker"] = failure(lambda: s3.head_object(Bucket=B, Key="dir/b.txt"))
out["get_marker_by_id"] = failure(lambda: s3.get_object(Bucket=B, Key="dir/b.txt", VersionId=ids["bm"]))
out["head_marker_by_id"] = failure(lambda: s3.head_object(Bucket=B, Key="dir/b.txt", VersionId=ids["bm"]))
out["get_other_keys_version"] = failure(lambda: s3.get_object(Bucket=B, Key="a.txt", VersionId=ids["b1"]))
out["get_malformed_version"] = failure(lambda: s3.get_object(Bucket=B, Key="a.txt", VersionId="not-a-version"))

# Tags and attributes belong to one version.
s3.put_object_tagging(Bucket=B, Key="a.txt", VersionId=ids["a1"],
                      Tagging={"TagSet": [{"Key": "age", "Value": "oldest"}]})
r = s3.get_object_tagging(Bucket=B, Key="a.txt", VersionId=ids["a1"])
out["tags_a1"] = {"version_id": r.get("VersionId", ""), "tags": r["TagSet"]}
r = s3.get_object_tagging(Bucket=B, Key="a.txt")
out["tags_current"] = {"version_id": r.get("VersionId", ""), "tags": r["TagSet"]}
# Without a VersionId, tagging changes the current version and says which.
r = s3.put_object_tagging(Bucket=B, Key="a.txt", Tagging={"TagSet": [{"Key": "age", "Value": "newest"}]})
out["put_tags_current_version"] = r.get("VersionId", "")
r = s3.delete_object_tagging(Bucket=B, Key="a.txt")
out["delete_tags_current_version"] = r.get("VersionId", "")
r = s3.get_object_tagging(Bucket=B, Key="a.txt", VersionId=ids["a1"])
out["tags_a1_after"] = r["TagSet"]
r = s3.get_object_attributes(Bucket=B, Key="a.txt", VersionId=ids["a2"], ObjectAttributes=["ObjectSize", "ETag"])
out["attributes_a2"] = {"version_id": r.get("VersionId", ""), "size": r.get("ObjectSize", -1)}

# One DeleteObjects naming a version, a marker, a key without a version
# (a new marker), a well-formed ID that is no version of its key and a
# malformed one.
r = s3.delete_objects(Bucket=B, Delete={"Objects": [
    {"Key": "a.txt", "VersionId": ids["a2"]},
    {"Key": "dir/b.txt", "VersionId": ids["bm"]},
    {"Key": "c.txt"},
    {"Key": "a.txt", "VersionId": ids["b1"]},
    {"Key": "a.txt", "VersionId": "not-a-version"},
]})
out["delete_objects"] = {"deleted": r.get("Deleted", []), "errors": r.get("Errors", [])}
r = s3.get_object(Bucket=B, Key="dir/b.txt")
out["b_after_marker_removed"] = {"body": r["Body"].read().decode(), "version_id": r.get("VersionId", "")}
out["walk_after_delete_objects"] = walk(B, 1000)

# A multipart upload whose second part is copied from an old version.
up = s3.create_multipart_upload(Bucket=B, Key="mp.bin")["UploadId"]
part1 = os.urandom(5 << 20)
p1 = s3.upload_part(Bucket=B, Key="mp.bin", UploadId=up, PartNumber=1, Body=part1)
p2 = s3.upload_part_copy(Bucket=B, Key="mp.bin", UploadId=up, PartNumber=2,
                         CopySource={"Bucket": B, "Key": "a.txt", "VersionId": ids["a1"]})
out["part_copy_source_version"] = p2.get("CopySourceVersionId", "")
done = s3.complete_multipart_upload(Bucket=B, Key="mp.bin", UploadId=up, MultipartUpload={"Parts": [
    {"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]}]})
out["mp_version"] = done.get("VersionId", "")
r = s3.get_object(Bucket=B, Key="mp.bin")
out["mp_get"] = {"same": r["Body"].read() == part1 + b"a one", "version_id": r.get("VersionId", "")}
r = s3.get_object(Bucket=B, Key="mp.bin", VersionId=out["mp_version"], PartNumber=2)
out["mp_part2"] = {"body": r["Body"].read().decode(), "parts": r.get("PartsCount", 0), "version_id": r.get("VersionId", "")}
# A copy naming a delete marker by its ID is refused.
out["copy_from_marker"] = failure(lambda: s3.copy_object(
    Bucket=B, Key="x.txt", CopySource={"Bucket": B, "Key": "c.txt", "VersionId": ids["cm1"]}))
out["copy_from_deleted_key"] = failure(lambda: s3.copy_object(
    Bucket=B, Key="x.txt", CopySource={"Bucket": B, "Key": "c.txt"}))

out["delete_bucket_with_versions"] = failure(lambda: s3.delete_bucket(Bucket=B))
out["count_before_empty"] = sum(len(p) for p in walk(B, 1000))
batches = resource.Bucket(B).object_versions.delete()
out["empty_deleted"] = sum(len(b.get("Deleted", [])) for b in batches)
out["empty_errors"] = [e for b in batches for e in b.get("Errors", [])]
out["walk_after_empty"] = walk(B, 1000)
s3.delete_bucket(Bucket=B)
out["head_deleted_bucket"] = failure(lambda: s3.head_bucket(Bucket=B))

# A bucket that stays, for the kernel check: a null version from before
# versioning, then a version, then suspended-mode null versions.
K = "boto-keep"
s3.create_bucket(Bucket=K)
keep = {"unversioned_put": s3.put_object(Bucket=K, Key="old.txt", Body=b"written before versioning").get("VersionId", "")}
s3.put_bucket_versioning(Bucket=K, VersioningConfiguration={"Status": "Enabled"})
keep["enabled_put"] = s3.put_object(Bucket=K, Key="old.txt", Body=b"written with versioning").get("VersionId", "")
s3.put_bucket_versioning(Bucket=K, VersioningConfiguration={"Status": "Suspended"})
keep["state"] = s3.get_bucket_versioning(Bucket=K).get("Status", "")
keep["suspended_put"] = s3.put_object(Bucket=K, Key="sub/new.txt", Body=b"suspended").get("VersionId", "")
r = s3.delete_object(Bucket=K, Key="sub/new.txt")
keep["suspended_delete"] = {"marker": r.get("DeleteMarker", False), "version_id": r.get("VersionId", "")}
keep["suspended_put2"] = s3.put_object(Bucket=K, Key="sub/kept.txt", Body=b"kept").get("VersionId", "")
r = s3.get_object(Bucket=K, Key="old.txt", VersionId="null")
keep["old_null"] = {"body": r["Body"].read().decode(), "version_id": r.get("VersionId", "")}
keep["walk"] = walk(K, 1000)
out["keep"] = keep

json.dump(out, sys.stdout)
