package lifecycle

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics, refuses only with an *Error, and what it
// accepts encodes to a document that parses back equal and encodes the
// same.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		doc(minimal),
		doc(`<ID>a</ID><Filter><And><Prefix>p/</Prefix>`+tagXML+tag2XML+`<ObjectSizeGreaterThan>1</ObjectSizeGreaterThan><ObjectSizeLessThan>9</ObjectSizeLessThan></And></Filter>`+on+expire1,
			`<Prefix>x</Prefix><Status>Disabled</Status><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>`+abortXML),
		doc(`<ID></ID><Filter><Tag><Key>k</Key></Tag></Filter>` + on + `<Expiration><Date>2026-12-31T00:00:00.000Z</Date></Expiration>`),
		doc(`<Filter><Prefix>a&amp;&#xD;</Prefix></Filter>` + on + `<Expiration><ExpiredObjectDeleteMarker>1</ExpiredObjectDeleteMarker></Expiration>`),
		doc(minimal + `<Transition><Days>1</Days></Transition>`),
		`<LifecycleConfiguration><Rule>` + minimal + `</Rule></LifecycleConfiguration>`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := Parse(body)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("refusal %v is not an *Error", err)
			}
			return
		}
		enc := c.Encode()
		back, err := Parse(enc)
		if err != nil {
			t.Fatalf("Encode gave %s, which Parse refuses: %v", enc, err)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("Parse(Encode(c)) = %+v, want %+v", back, c)
		}
		if again := back.Encode(); string(again) != string(enc) {
			t.Fatalf("Encode is not stable: %s, then %s", enc, again)
		}
	})
}
