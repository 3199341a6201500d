# boto3 half of integration.TestObjectLockBoto3: object lock as boto3
# drives it. A bucket made with object lock and a default retention,
# versions written with and without lock parameters, retention extended
# and refused, legal holds, deletes refused and bypassed, and
# delete_objects answering per key. Prints one JSON object of
# observations; the Go test judges them.
import datetime
import json
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, access_key, secret_key, region = sys.argv[1:5]
session = boto3.session.Session(
    aws_access_key_id=access_key, aws_secret_access_key=secret_key, region_name=region)
config = Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1})
s3 = session.client("s3", endpoint_url=endpoint, config=config)
out = {}


def code(fn):
    """Runs fn; "" when it succeeds, else the error code."""
    try:
        fn()
        return ""
    except ClientError as e:
        return e.response["Error"]["Code"]


now = datetime.datetime.now(datetime.timezone.utc)
bucket = "bworm"
s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
out["versioning"] = s3.get_bucket_versioning(Bucket=bucket).get("Status", "")
s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={
    "ObjectLockEnabled": "Enabled",
    "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Years": 1}}})
rule = s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]["Rule"]
out["default_rule"] = rule["DefaultRetention"]

gov = s3.put_object(Bucket=bucket, Key="g", Body=b"governed", ObjectLockMode="GOVERNANCE",
                    ObjectLockRetainUntilDate=now + datetime.timedelta(hours=1))["VersionId"]
held = s3.put_object(Bucket=bucket, Key="h", Body=b"held", ObjectLockMode="GOVERNANCE",
                     ObjectLockRetainUntilDate=now + datetime.timedelta(hours=1),
                     ObjectLockLegalHoldStatus="ON")["VersionId"]
dflt = s3.put_object(Bucket=bucket, Key="d", Body=b"default")["VersionId"]
head = s3.head_object(Bucket=bucket, Key="d", VersionId=dflt)
out["default_head"] = {"mode": head.get("ObjectLockMode", ""),
                       "until_days": (head["ObjectLockRetainUntilDate"] - now).days}
head = s3.head_object(Bucket=bucket, Key="h")
out["held_head"] = {"mode": head.get("ObjectLockMode", ""), "hold": head.get("ObjectLockLegalHoldStatus", "")}

out["extend_governance"] = code(lambda: s3.put_object_retention(
    Bucket=bucket, Key="g", VersionId=gov,
    Retention={"Mode": "GOVERNANCE", "RetainUntilDate": now + datetime.timedelta(hours=2)}))
out["shorten_governance"] = code(lambda: s3.put_object_retention(
    Bucket=bucket, Key="g", VersionId=gov,
    Retention={"Mode": "GOVERNANCE", "RetainUntilDate": now + datetime.timedelta(minutes=30)}))
out["past_date"] = code(lambda: s3.put_object_retention(
    Bucket=bucket, Key="g", VersionId=gov,
    Retention={"Mode": "GOVERNANCE", "RetainUntilDate": now - datetime.timedelta(minutes=30)}))
r = s3.get_object_retention(Bucket=bucket, Key="g", VersionId=gov)["Retention"]
out["retention_g"] = {"mode": r["Mode"], "minutes": int((r["RetainUntilDate"] - now).total_seconds() // 60)}
out["hold_h"] = s3.get_object_legal_hold(Bucket=bucket, Key="h", VersionId=held)["LegalHold"]["Status"]
out["delete_governed"] = code(lambda: s3.delete_object(Bucket=bucket, Key="g", VersionId=gov))
out["delete_default_compliance"] = code(lambda: s3.delete_object(
    Bucket=bucket, Key="d", VersionId=dflt, BypassGovernanceRetention=True))

res = s3.delete_objects(Bucket=bucket, BypassGovernanceRetention=True, Delete={"Objects": [
    {"Key": "g", "VersionId": gov}, {"Key": "h", "VersionId": held}]})
out["delete_objects"] = {
    "deleted": sorted(d["Key"] for d in res.get("Deleted", [])),
    "errors": sorted((e["Key"], e["Code"]) for e in res.get("Errors", [])),
}
s3.put_object_legal_hold(Bucket=bucket, Key="h", VersionId=held, LegalHold={"Status": "OFF"})
out["delete_h_after_hold_off"] = code(lambda: s3.delete_object(
    Bucket=bucket, Key="h", VersionId=held, BypassGovernanceRetention=True))
out["versions_left"] = sorted(v["Key"] for v in s3.list_object_versions(Bucket=bucket).get("Versions", []))
print(json.dumps(out))
