package admin

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// The bearer token of "mc admin prometheus generate" is a JSON Web Token
// (RFC 7519) in its compact form, three base64url parts without padding:
//
//	header  {"alg":"HS512","typ":"JWT"}
//	claims  {"iss":"prometheus","sub":"ACCESSKEY","exp":UNIXSECONDS}
//	sig     HMAC-SHA512(secret key of ACCESSKEY, header "." claims)
//
// mc signs with the alias's secret key and sets exp 100 years ahead.
// Nothing is stored: the server finds the secret by the access key in
// sub, so changing the secret key (or removing the key) revokes the
// token.

// PrometheusIssuer is the issuer mc writes in its tokens.
const PrometheusIssuer = "prometheus"

// Why a token is refused.
var (
	ErrTokenMalformed  = errors.New("not a JSON Web Token")
	ErrTokenAlgorithm  = errors.New("the token is not signed with HS512")
	ErrTokenClaims     = errors.New("the token is not a Prometheus token (iss \"prometheus\", sub, exp)")
	ErrTokenUnknownKey = errors.New("the token's access key does not exist")
	ErrTokenSignature  = errors.New("the token's signature does not match the secret key of its access key")
	ErrTokenExpired    = errors.New("the token has expired")
	ErrTokenNotYet     = errors.New("the token is not valid yet")
)

// maxTokenLen bounds what is decoded: mc's tokens are about 200 bytes.
const maxTokenLen = 4096

// jwtHeader is the header of a compact JWT.
type jwtHeader struct {
	Alg string `json:"alg"`
	Typ string `json:"typ,omitempty"`
}

// prometheusClaims are the claims mc sets, and nbf, which other token
// makers may. Times are NumericDate: seconds since the Unix epoch, which
// RFC 7519 allows to be fractional.
type prometheusClaims struct {
	Issuer    string   `json:"iss"`
	Subject   string   `json:"sub"`
	ExpiresAt *float64 `json:"exp"`
	NotBefore *float64 `json:"nbf,omitempty"`
}

// b64 is base64url without padding; strict, so that each part has one
// encoding.
var b64 = base64.RawURLEncoding.Strict()

// PrometheusToken makes the token mc makes for accessKey, secretKey,
// expiring at exp.
func PrometheusToken(accessKey, secretKey string, exp time.Time) string {
	head, _ := json.Marshal(jwtHeader{Alg: "HS512", Typ: "JWT"})
	claims, _ := json.Marshal(struct {
		Iss string `json:"iss"`
		Sub string `json:"sub"`
		Exp int64  `json:"exp"`
	}{PrometheusIssuer, accessKey, exp.Unix()})
	signing := b64.EncodeToString(head) + "." + b64.EncodeToString(claims)
	return signing + "." + b64.EncodeToString(signJWT(secretKey, signing))
}

func signJWT(secretKey, signing string) []byte {
	m := hmac.New(sha512.New, []byte(secretKey))
	m.Write([]byte(signing))
	return m.Sum(nil)
}

// LooksLikeJWT tells a compact JWT (three dot-separated base64url parts)
// from the other bearer token (MetricsToken, "ACCESSKEY:HEX"), whose
// colon base64url never holds, whatever dots the access key has.
func LooksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && !strings.Contains(token, ":")
}

// VerifyPrometheusToken checks a token as mc makes it and returns its
// access key: HS512 only (an unsigned "none" token or another algorithm
// is refused), the signature under secretOf(sub), iss "prometheus", exp
// after now and nbf, when present, not after now. Errors are the Err*
// of this file, wrapped.
func VerifyPrometheusToken(token string, secretOf func(accessKey string) (string, bool), now time.Time) (string, error) {
	if len(token) > maxTokenLen {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrTokenMalformed, maxTokenLen)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", ErrTokenMalformed
	}
	var head jwtHeader
	if err := decodeJWTPart(parts[0], &head); err != nil {
		return "", err
	}
	if head.Alg != "HS512" || head.Typ != "" && !strings.EqualFold(head.Typ, "JWT") {
		return "", fmt.Errorf("%w (alg %q)", ErrTokenAlgorithm, head.Alg)
	}
	var c prometheusClaims
	if err := decodeJWTPart(parts[1], &c); err != nil {
		return "", err
	}
	if c.Subject == "" || c.ExpiresAt == nil || c.Issuer != PrometheusIssuer {
		return "", ErrTokenClaims
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil {
		return "", fmt.Errorf("%w: signature: %v", ErrTokenMalformed, err)
	}
	secret, ok := secretOf(c.Subject)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrTokenUnknownKey, c.Subject)
	}
	if !hmac.Equal(sig, signJWT(secret, parts[0]+"."+parts[1])) {
		return "", ErrTokenSignature
	}
	// Checked once the signature is: a forged token learns nothing from
	// which of these fails.
	if !now.Before(numericDate(*c.ExpiresAt)) {
		return "", fmt.Errorf("%w: at %s", ErrTokenExpired, numericDate(*c.ExpiresAt).UTC().Format(time.RFC3339))
	}
	if c.NotBefore != nil && now.Before(numericDate(*c.NotBefore)) {
		return "", ErrTokenNotYet
	}
	return c.Subject, nil
}

// decodeJWTPart decodes one base64url JSON part of a token into v.
func decodeJWTPart(part string, v any) error {
	raw, err := b64.DecodeString(part)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTokenMalformed, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %v", ErrTokenMalformed, err)
	}
	return nil
}

// numericDate converts seconds since the epoch to a time, clamping what
// a time cannot hold (a NaN reads as the epoch: expired).
func numericDate(s float64) time.Time {
	switch {
	case math.IsNaN(s):
		return time.Unix(0, 0)
	case s > 1<<62:
		return time.Unix(1<<62, 0)
	case s < -(1 << 62):
		return time.Unix(-(1 << 62), 0)
	}
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9))
}
