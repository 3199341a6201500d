# boto3 half of integration.TestConformance2Boto3: browser form uploads
# (generate_presigned_post, then a real multipart POST), conditional
# writes, bucket tagging, storage classes and canned ACLs. Prints one JSON
# object of observations; the Go test judges them.
import json
import sys
import urllib.request

import boto3
import requests
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, access_key, secret_key, region = sys.argv[1:5]
s3 = boto3.client(
    "s3", endpoint_url=endpoint, aws_access_key_id=access_key,
    aws_secret_access_key=secret_key, region_name=region,
    config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
)
out = {}


def code(fn):
    try:
        fn()
        return "ok"
    except ClientError as e:
        return e.response["Error"]["Code"]


s3.create_bucket(Bucket="boto-forms")

post = s3.generate_presigned_post(
    "boto-forms", "uploads/${filename}",
    Fields={"Content-Type": "text/plain", "x-amz-meta-origin": "boto3", "success_action_status": "201"},
    Conditions=[{"Content-Type": "text/plain"}, {"x-amz-meta-origin": "boto3"},
                {"success_action_status": "201"}, ["content-length-range", 1, 100]],
    ExpiresIn=600,
)
r = requests.post(post["url"], data=post["fields"], files={"file": ("hello.txt", b"hello boto3")})
out["post_status"] = r.status_code
out["post_body"] = r.text
head = s3.head_object(Bucket="boto-forms", Key="uploads/hello.txt")
out["post_meta"] = head["Metadata"]
out["post_type"] = head["ContentType"]
r = requests.post(post["url"], data=post["fields"], files={"file": ("big.txt", b"x" * 101)})
out["post_too_large"] = r.status_code, r.text
# The same form with a field the policy does not name.
fields = dict(post["fields"], **{"x-amz-meta-extra": "1"})
r = requests.post(post["url"], data=fields, files={"file": ("other.txt", b"data")})
out["post_extra_field"] = r.status_code, r.text

# A form built by hand with urllib, redirecting on success.
post = s3.generate_presigned_post(
    "boto-forms", "redirected",
    Fields={"success_action_redirect": "http://127.0.0.1:1/done"},
    Conditions=[{"success_action_redirect": "http://127.0.0.1:1/done"}], ExpiresIn=60)
boundary = "xfs3boundary"
parts = []
for k, v in post["fields"].items():
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n')
parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="r"\r\n'
             'Content-Type: application/octet-stream\r\n\r\nredirect me\r\n')
parts.append(f"--{boundary}--\r\n")
req = urllib.request.Request(post["url"], data="".join(parts).encode(), method="POST",
                             headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


try:
    urllib.request.build_opener(NoRedirect).open(req)
    out["redirect"] = "no redirect"
except urllib.error.HTTPError as e:
    out["redirect"] = [e.code, e.headers.get("Location")]

# Conditional writes.
out["put_if_none_match_new"] = code(lambda: s3.put_object(Bucket="boto-forms", Key="cond", Body=b"1", IfNoneMatch="*"))
out["put_if_none_match_again"] = code(lambda: s3.put_object(Bucket="boto-forms", Key="cond", Body=b"2", IfNoneMatch="*"))
etag = s3.head_object(Bucket="boto-forms", Key="cond")["ETag"]
out["put_if_match_wrong"] = code(lambda: s3.put_object(Bucket="boto-forms", Key="cond", Body=b"3", IfMatch='"0123"'))
out["put_if_match_right"] = code(lambda: s3.put_object(Bucket="boto-forms", Key="cond", Body=b"4", IfMatch=etag))
out["cond_body"] = s3.get_object(Bucket="boto-forms", Key="cond")["Body"].read().decode()

# Bucket tagging.
out["tags_none"] = code(lambda: s3.get_bucket_tagging(Bucket="boto-forms"))
s3.put_bucket_tagging(Bucket="boto-forms", Tagging={"TagSet": [{"Key": "team", "Value": "storage"}]})
out["tags"] = s3.get_bucket_tagging(Bucket="boto-forms")["TagSet"]
s3.delete_bucket_tagging(Bucket="boto-forms")
out["tags_deleted"] = code(lambda: s3.get_bucket_tagging(Bucket="boto-forms"))

# Storage classes and ACLs.
s3.put_object(Bucket="boto-forms", Key="cold", Body=b"c", StorageClass="GLACIER_IR")
out["class_head"] = s3.head_object(Bucket="boto-forms", Key="cold").get("StorageClass")
out["class_list"] = {o["Key"]: o["StorageClass"] for o in s3.list_objects_v2(Bucket="boto-forms")["Contents"]}
out["class_bad"] = code(lambda: s3.put_object(Bucket="boto-forms", Key="bad", Body=b"c", StorageClass="COLD"))
out["acl_private"] = code(lambda: s3.put_object(Bucket="boto-forms", Key="acl", Body=b"a", ACL="private"))
out["acl_public"] = code(lambda: s3.put_object(Bucket="boto-forms", Key="acl", Body=b"a", ACL="public-read"))
out["put_object_acl"] = code(lambda: s3.put_object_acl(Bucket="boto-forms", Key="acl", ACL="bucket-owner-full-control"))
out["put_bucket_acl_public"] = code(lambda: s3.put_bucket_acl(Bucket="boto-forms", ACL="public-read"))

# A presigned URL past its end.
url = s3.generate_presigned_url("get_object", Params={"Bucket": "boto-forms", "Key": "cold"}, ExpiresIn=1)
import time
time.sleep(2)
r = requests.get(url)
out["presigned_expired"] = r.status_code, r.text
print(json.dumps(out))
