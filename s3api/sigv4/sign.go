package sigv4

import (
	"net/http"
	"strings"
	"time"
)

// signedByClient are the headers Sign signs: those MinIO's admin client
// signs (admin-wire.md), enough for any request whose body is hashed.
var signedByClient = []string{"host", "x-amz-content-sha256", "x-amz-date"}

// Sign signs r as a client, with the same canonical request the Verifier
// checks: SigV4 in the Authorization header, service s3, over host,
// x-amz-content-sha256 (set to payloadHash: the body's hex SHA-256, or
// UnsignedPayload) and x-amz-date (set to t). The region may be empty, as
// mc signs admin requests.
func Sign(r *http.Request, accessKey, secret, region, payloadHash string, t time.Time) error {
	t = t.UTC()
	r.Header.Set(headerDate, t.Format(timeFormat))
	r.Header.Set(headerContentSHA, payloadHash)
	canon, err := CanonicalRequest(r, signedByClient, payloadHash, "")
	if err != nil {
		return err
	}
	scope := Scope{Date: t.Format(dateFormat), Region: region, Service: "s3"}
	sig := sign(SigningKey(secret, scope), StringToSign(t, scope, canon))
	r.Header.Set("Authorization", Algorithm+" Credential="+accessKey+"/"+scope.String()+
		", SignedHeaders="+strings.Join(signedByClient, ";")+", Signature="+sig)
	return nil
}
