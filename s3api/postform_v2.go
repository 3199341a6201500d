package s3api

import "github.com/xfs3/xfs3/s3api/sigv4"

// Form uploads signed with Signature Version 2, as older SDKs, boto3's
// generate_presigned_post with signature version "s3", and ceph's tests
// send them:
//
//	AWSAccessKeyId  the access key
//	policy          the base64 policy, the same document as with V4
//	signature       base64(HMAC-SHA1(secret key, policy))
//
// The policy's rules are V4's (policy.go); AWSAccessKeyId and signature
// are exempt from them, as x-amz-signature is with V4.

// formV2Fields are a V2 form's signature fields, lower case as read, and
// the names S3's messages give them.
var formV2Fields = []struct{ field, name string }{
	{"awsaccesskeyid", "AWSAccessKeyId"},
	{"signature", "Signature"},
}

// isFormV2 tells a form signed with V2: it has a V2 signature field and
// none of V4's (a form with both is V4's to judge).
func isFormV2(fields map[string]string) bool {
	for _, f := range []string{"x-amz-algorithm", "x-amz-credential", "x-amz-signature"} {
		if _, ok := fields[f]; ok {
			return false
		}
	}
	for _, f := range formV2Fields {
		if _, ok := fields[f.field]; ok {
			return true
		}
	}
	return false
}

// verifyFormV2 checks a V2 form's signature over its policy. A missing
// signature field is S3's 400 InvalidArgument; an unknown key and a
// wrong signature are 403 (InvalidAccessKeyId, SignatureDoesNotMatch).
func (s *server) verifyFormV2(policy string, fields map[string]string) (*sigv4.Auth, error) {
	for _, f := range formV2Fields {
		if fields[f.field] == "" {
			return nil, errorf("InvalidArgument", "Bucket POST must contain a field named '%s'.  If it is specified, please check the order of the fields.", f.name)
		}
	}
	return s.verifier.VerifyPostFormV2(sigv4.PostFormV2{
		Policy: policy, AccessKey: fields["awsaccesskeyid"], Signature: fields["signature"],
	})
}

// exemptFormV2Fields removes a V2 form's signature fields from the fields
// its policy must name.
func exemptFormV2Fields(fields map[string]string) {
	for _, f := range formV2Fields {
		delete(fields, f.field)
	}
}
