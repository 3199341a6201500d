package admin

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"
)

// mcToken is the token mc prints for access key XFS3TESTACCESSKEY,
// secret key xfs3-test-secret, expiring on 2100-01-01: header and claims
// as its JWT library writes them, signed outside Go (Python's hmac).
const mcToken = "eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9" +
	".eyJpc3MiOiJwcm9tZXRoZXVzIiwic3ViIjoiWEZTM1RFU1RBQ0NFU1NLRVkiLCJleHAiOjQxMDI0NDQ4MDB9" +
	".IgTTU12dzWLhcXvLtL0x568u2-9zEgvKdwz7Dll93wkI3vDYp70-Qbok11lzfSY4ayfOxT8aJ9br7D_WHhvneQ"

var tokenKeys = map[string]string{"XFS3TESTACCESSKEY": "xfs3-test-secret", "other": "other-secret"}

func secretOf(ak string) (string, bool) { sk, ok := tokenKeys[ak]; return sk, ok }

// handToken builds a token from raw header and claims JSON, signed with
// secret by HMAC-SHA512.
func handToken(header, claims, secret string) string {
	signing := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
	return signing + "." + b64.EncodeToString(signJWT(secret, signing))
}

// TestPrometheusTokenWire: the token made here is mc's, byte for byte.
func TestPrometheusTokenWire(t *testing.T) {
	if got := PrometheusToken("XFS3TESTACCESSKEY", "xfs3-test-secret", time.Unix(4102444800, 0)); got != mcToken {
		t.Errorf("PrometheusToken:\n got %s\nwant %s", got, mcToken)
	}
}

// TestVerifyPrometheusToken: mc's token passes until it expires; a token
// of another key, secret, algorithm, issuer or shape is refused with the
// reason.
func TestVerifyPrometheusToken(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	hs256 := func() string {
		signing := b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
			b64.EncodeToString([]byte(`{"iss":"prometheus","sub":"other","exp":4102444800}`))
		m := hmac.New(sha256.New, []byte("other-secret"))
		m.Write([]byte(signing))
		return signing + "." + b64.EncodeToString(m.Sum(nil))
	}()
	noneToken := b64.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		b64.EncodeToString([]byte(`{"iss":"prometheus","sub":"other","exp":4102444800}`)) + "."
	other := PrometheusToken("other", "other-secret", now.Add(time.Hour))
	swapped := other[:strings.LastIndex(other, ".")] + mcToken[strings.LastIndex(mcToken, "."):]
	for _, c := range []struct {
		name  string
		token string
		ak    string
		err   error
	}{
		{"mc's token", mcToken, "XFS3TESTACCESSKEY", nil},
		{"made here", PrometheusToken("other", "other-secret", now.Add(time.Hour)), "other", nil},
		{"fractional exp, nbf past, no typ", handToken(`{"alg":"HS512"}`, `{"iss":"prometheus","sub":"other","exp":1796515200.5,"nbf":1}`, "other-secret"), "other", nil},
		{"expired", PrometheusToken("other", "other-secret", now), "", ErrTokenExpired},
		{"expires in a second", PrometheusToken("other", "other-secret", now.Add(time.Second)), "other", nil},
		{"nbf ahead", handToken(`{"alg":"HS512","typ":"JWT"}`, `{"iss":"prometheus","sub":"other","exp":4102444800,"nbf":4000000000}`, "other-secret"), "", ErrTokenNotYet},
		{"wrong secret", PrometheusToken("other", "xfs3-test-secret", now.Add(time.Hour)), "", ErrTokenSignature},
		{"another key's claims under this signature", swapped, "", ErrTokenSignature},
		{"unknown key", PrometheusToken("nobody", "x", now.Add(time.Hour)), "", ErrTokenUnknownKey},
		{"alg none", noneToken, "", ErrTokenAlgorithm},
		{"HS256", hs256, "", ErrTokenAlgorithm},
		{"typ other", handToken(`{"alg":"HS512","typ":"JWS"}`, `{"iss":"prometheus","sub":"other","exp":4102444800}`, "other-secret"), "", ErrTokenAlgorithm},
		{"other issuer", handToken(`{"alg":"HS512","typ":"JWT"}`, `{"iss":"console","sub":"other","exp":4102444800}`, "other-secret"), "", ErrTokenClaims},
		{"no exp", handToken(`{"alg":"HS512","typ":"JWT"}`, `{"iss":"prometheus","sub":"other"}`, "other-secret"), "", ErrTokenClaims},
		{"no sub", handToken(`{"alg":"HS512","typ":"JWT"}`, `{"iss":"prometheus","exp":4102444800}`, "other-secret"), "", ErrTokenClaims},
		{"exp a string", handToken(`{"alg":"HS512","typ":"JWT"}`, `{"iss":"prometheus","sub":"other","exp":"4102444800"}`, "other-secret"), "", ErrTokenMalformed},
		{"two parts", mcToken[:strings.LastIndex(mcToken, ".")], "", ErrTokenMalformed},
		{"padded", mcToken + "==", "", ErrTokenMalformed},
		{"not base64", "a.b.c", "", ErrTokenMalformed},
		{"claims not JSON", b64.EncodeToString([]byte(`{"alg":"HS512"}`)) + "." + b64.EncodeToString([]byte("[")) + ".AA", "", ErrTokenMalformed},
		{"too long", mcToken + strings.Repeat("A", maxTokenLen), "", ErrTokenMalformed},
	} {
		ak, err := VerifyPrometheusToken(c.token, secretOf, now)
		if ak != c.ak || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, ak, err, c.ak, c.err)
		}
	}
	if !LooksLikeJWT(mcToken) || LooksLikeJWT(MetricsToken("XFS3TESTACCESSKEY", "xfs3-test-secret")) ||
		LooksLikeJWT(MetricsToken("key.with.dots", "xfs3-test-secret")) {
		t.Error("LooksLikeJWT mistakes one token for the other")
	}
}

// FuzzVerifyPrometheusToken: any token is refused or accepted without
// panicking, and an accepted one names a known key and verifies again
// by its own signature.
func FuzzVerifyPrometheusToken(f *testing.F) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	f.Add(mcToken)
	f.Add(PrometheusToken("other", "other-secret", now.Add(time.Hour)))
	f.Add(handToken(`{"alg":"HS512"}`, `{"iss":"prometheus","sub":"other","exp":1e300,"nbf":-1e300}`, "other-secret"))
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, token string) {
		ak, err := VerifyPrometheusToken(token, secretOf, now)
		if err != nil {
			return
		}
		sk, ok := secretOf(ak)
		if !ok {
			t.Fatalf("accepted %q for unknown key %q", token, ak)
		}
		parts := strings.Split(token, ".")
		if b64.EncodeToString(signJWT(sk, parts[0]+"."+parts[1])) != parts[2] {
			t.Fatalf("accepted %q with a signature that is not its own", token)
		}
	})
}
