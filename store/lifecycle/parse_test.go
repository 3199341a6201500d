package lifecycle

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// doc is a LifecycleConfiguration of the rules given, each the inner XML
// of one Rule.
func doc(rules ...string) string {
	var b strings.Builder
	b.WriteString(`<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	for _, r := range rules {
		b.WriteString("<Rule>" + r + "</Rule>")
	}
	b.WriteString("</LifecycleConfiguration>")
	return b.String()
}

const (
	on       = `<Status>Enabled</Status>`
	anyKey   = `<Filter></Filter>`
	expire1  = `<Expiration><Days>1</Days></Expiration>`
	minimal  = `<ID>r</ID>` + anyKey + on + expire1
	tagXML   = `<Tag><Key>k</Key><Value>v</Value></Tag>`
	tag2XML  = `<Tag><Key>k2</Key><Value>v2</Value></Tag>`
	abortXML = `<AbortIncompleteMultipartUpload><DaysAfterInitiation>7</DaysAfterInitiation></AbortIncompleteMultipartUpload>`
)

// TestParse: documents S3 accepts (AWS's examples first) and the Config
// each becomes.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []Rule
	}{
		{"Example 1: a prefix filter", doc(`<ID>Transition and Expiration Rule</ID><Filter><Prefix>tax/</Prefix></Filter>` + on + `<Expiration><Days>3650</Days></Expiration>`),
			[]Rule{{ID: "Transition and Expiration Rule", Enabled: true, Filter: Filter{Prefix: "tax/"}, Expiration: &Expiration{Days: 3650}}}},
		{"Example 1: a prefix and two tags", doc(`<ID>r</ID><Filter><And><Prefix>tax/</Prefix>` + tagXML + tag2XML + `</And></Filter>` + on + expire1),
			[]Rule{{ID: "r", Enabled: true, Filter: Filter{Prefix: "tax/", Tags: []Tag{{"k", "v"}, {"k2", "v2"}}}, Expiration: &Expiration{Days: 1}}}},
		{"Example 2: disabled", doc(`<ID>Rule1</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Disabled</Status>` + expire1),
			[]Rule{{ID: "Rule1", Filter: Filter{Prefix: "logs/"}, Expiration: &Expiration{Days: 1}}}},
		{"Example 6: noncurrent versions", doc(`<ID>sample-rule</ID><Filter><Prefix></Prefix></Filter>` + on + `<NoncurrentVersionExpiration><NoncurrentDays>90</NoncurrentDays></NoncurrentVersionExpiration>`),
			[]Rule{{ID: "sample-rule", Enabled: true, NoncurrentExpiration: &NoncurrentExpiration{NoncurrentDays: 90}}}},
		{"Example 7: ExpiredObjectDeleteMarker", doc(`<ID>Rule 2</ID><Filter><Prefix>logs/</Prefix></Filter>` + on + `<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`),
			[]Rule{{ID: "Rule 2", Enabled: true, Filter: Filter{Prefix: "logs/"}, Expiration: &Expiration{ExpiredObjectDeleteMarker: true}}}},
		{"Example 8: abort incomplete uploads", doc(`<ID>sample-rule</ID><Filter><Prefix>SomeKeyPrefix/</Prefix></Filter>` + on + abortXML),
			[]Rule{{ID: "sample-rule", Enabled: true, Filter: Filter{Prefix: "SomeKeyPrefix/"}, AbortIncompleteUpload: 7}}},
		{"Example 9: size bounds", doc(`<ID>s</ID><Filter><And><Prefix>t/</Prefix><ObjectSizeGreaterThan>500</ObjectSizeGreaterThan><ObjectSizeLessThan>64000</ObjectSizeLessThan></And></Filter>` + on + expire1),
			[]Rule{{ID: "s", Enabled: true, Filter: Filter{Prefix: "t/", SizeGreaterThan: 500, SizeLessThan: 64000}, Expiration: &Expiration{Days: 1}}}},
		{"one size bound alone", doc(`<ID>s</ID><Filter><ObjectSizeLessThan>10</ObjectSizeLessThan></Filter>` + on + expire1),
			[]Rule{{ID: "s", Enabled: true, Filter: Filter{SizeLessThan: 10}, Expiration: &Expiration{Days: 1}}}},
		{"a tag alone, without Value", doc(`<ID>t</ID><Filter><Tag><Key>k</Key></Tag></Filter>` + on + expire1),
			[]Rule{{ID: "t", Enabled: true, Filter: Filter{Tags: []Tag{{"k", ""}}}, Expiration: &Expiration{Days: 1}}}},
		{"mc: And with an empty Prefix and one tag", doc(`<ID>t</ID><Filter><And><Prefix></Prefix>` + tagXML + `</And></Filter>` + on + expire1),
			[]Rule{{ID: "t", Enabled: true, Filter: Filter{Tags: []Tag{{"k", "v"}}}, Expiration: &Expiration{Days: 1}}}},
		{"a Date with milliseconds", doc(`<ID>d</ID>` + anyKey + on + `<Expiration><Date>2026-12-31T00:00:00.000Z</Date></Expiration>`),
			[]Rule{{ID: "d", Enabled: true, Expiration: &Expiration{Date: utc("2026-12-31T00:00:00Z")}}}},
		{"a Date at midnight UTC in another zone", doc(`<ID>d</ID>` + anyKey + on + `<Expiration><Date>2026-12-31T01:00:00+01:00</Date></Expiration>`),
			[]Rule{{ID: "d", Enabled: true, Expiration: &Expiration{Date: utc("2026-12-31T00:00:00Z")}}}},
		{"NewerNoncurrentVersions with days", doc(`<ID>n</ID>` + anyKey + on + `<NoncurrentVersionExpiration><NoncurrentDays>30</NoncurrentDays><NewerNoncurrentVersions>5</NewerNoncurrentVersions></NoncurrentVersionExpiration>`),
			[]Rule{{ID: "n", Enabled: true, NoncurrentExpiration: &NoncurrentExpiration{NoncurrentDays: 30, NewerNoncurrentVersions: 5}}}},
		{"mc: NewerNoncurrentVersions alone", doc(`<ID>n</ID>` + anyKey + on + `<NoncurrentVersionExpiration><NewerNoncurrentVersions>100</NewerNoncurrentVersions></NoncurrentVersionExpiration>`),
			[]Rule{{ID: "n", Enabled: true, NoncurrentExpiration: &NoncurrentExpiration{NewerNoncurrentVersions: 100}}}},
		{"the legacy rule-level Prefix", doc(`<ID>p</ID><Prefix>logs/</Prefix>` + on + expire1),
			[]Rule{{ID: "p", Enabled: true, Filter: Filter{Prefix: "logs/"}, Expiration: &Expiration{Days: 1}}}},
		{"every action, numbers with spaces", doc(`<ID>all</ID>` + anyKey + on + `<Expiration><Days> 30 </Days></Expiration><NoncurrentVersionExpiration><NoncurrentDays>7</NoncurrentDays></NoncurrentVersionExpiration>` + abortXML),
			[]Rule{{ID: "all", Enabled: true, Expiration: &Expiration{Days: 30}, NoncurrentExpiration: &NoncurrentExpiration{NoncurrentDays: 7}, AbortIncompleteUpload: 7}}},
		{"ExpiredObjectDeleteMarker false alone is no action", doc(`<ID>f</ID>` + anyKey + on + `<Expiration><ExpiredObjectDeleteMarker>false</ExpiredObjectDeleteMarker></Expiration>` + abortXML),
			[]Rule{{ID: "f", Enabled: true, AbortIncompleteUpload: 7}}},
		{"no namespace, no ID: one made from the position", `<LifecycleConfiguration><Rule>` + minimal + `</Rule><Rule>` + anyKey + on + expire1 + `</Rule></LifecycleConfiguration>`,
			[]Rule{{ID: "r", Enabled: true, Expiration: &Expiration{Days: 1}}, {ID: "rule-2", Enabled: true, Expiration: &Expiration{Days: 1}}}},
		{"a made ID steps around a given one", doc(`<ID></ID>`+anyKey+on+expire1, `<ID>rule-1</ID>`+anyKey+on+expire1),
			[]Rule{{ID: "rule-1.1", Enabled: true, Expiration: &Expiration{Days: 1}}, {ID: "rule-1", Enabled: true, Expiration: &Expiration{Days: 1}}}},
		{"255 characters of ID", doc(`<ID>` + strings.Repeat("é", 255) + `</ID>` + anyKey + on + expire1),
			[]Rule{{ID: strings.Repeat("é", 255), Enabled: true, Expiration: &Expiration{Days: 1}}}},
		{"escaped text", doc(`<ID>a&amp;b</ID><Filter><Prefix>x&#xD;y</Prefix></Filter>` + on + expire1),
			[]Rule{{ID: "a&b", Enabled: true, Filter: Filter{Prefix: "x\ry"}, Expiration: &Expiration{Days: 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.doc))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !reflect.DeepEqual(c.Rules, tt.want) {
				t.Errorf("got  %+v\nwant %+v", c.Rules, tt.want)
			}
			back, err := Parse(c.Encode())
			if err != nil || !reflect.DeepEqual(back, c) {
				t.Errorf("Parse(Encode) = %+v, %v", back, err)
			}
		})
	}
}

// TestParseRefusals: S3's refusals with its codes, and its messages where
// they are known.
func TestParseRefusals(t *testing.T) {
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf(`<ID>%d</ID>`, i) + anyKey + on + expire1
	}
	tests := []struct {
		name, doc string
		code, msg string
	}{
		{"empty body", ``, "MalformedXML", ""},
		{"not XML", `{"Rules": []}`, "MalformedXML", ""},
		{"another root", `<Tagging><Rule>` + minimal + `</Rule></Tagging>`, "MalformedXML", ""},
		{"no rules", doc(), "MalformedXML", ""},
		{"1001 rules", doc(many...), "MalformedXML", ""},
		{"an unknown element", doc(minimal + `<Foo/>`), "MalformedXML", ""},
		{"MinIO's ExpiredObjectAllVersions", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Days>1</Days><ExpiredObjectAllVersions>true</ExpiredObjectAllVersions></Expiration>`), "MalformedXML", ""},
		{"MinIO's DelMarkerExpiration", doc(minimal + `<DelMarkerExpiration><Days>1</Days></DelMarkerExpiration>`), "MalformedXML", ""},
		{"an unknown element at the top", `<LifecycleConfiguration><Rule>` + minimal + `</Rule><Other/></LifecycleConfiguration>`, "MalformedXML", ""},
		{"no Status", doc(`<ID>r</ID>` + anyKey + expire1), "MalformedXML", ""},
		{"Status in lower case", doc(`<ID>r</ID>` + anyKey + `<Status>enabled</Status>` + expire1), "MalformedXML", ""},
		{"two Status", doc(minimal + on), "MalformedXML", ""},
		{"two IDs", doc(minimal + `<ID>s</ID>`), "MalformedXML", ""},
		{"no Filter nor Prefix", doc(`<ID>r</ID>` + on + expire1), "MalformedXML", ""},
		{"both Filter and Prefix", doc(minimal + `<Prefix>a</Prefix>`), "MalformedXML", ""},
		{"Prefix and Tag outside And", doc(`<ID>r</ID><Filter><Prefix>a</Prefix>` + tagXML + `</Filter>` + on + expire1), "MalformedXML", ""},
		{"two tags outside And", doc(`<ID>r</ID><Filter>` + tagXML + tag2XML + `</Filter>` + on + expire1), "MalformedXML", ""},
		{"two sizes outside And", doc(`<ID>r</ID><Filter><ObjectSizeGreaterThan>1</ObjectSizeGreaterThan><ObjectSizeLessThan>9</ObjectSizeLessThan></Filter>` + on + expire1), "MalformedXML", ""},
		{"And beside a Prefix", doc(`<ID>r</ID><Filter><Prefix>a</Prefix><And>` + tagXML + tag2XML + `</And></Filter>` + on + expire1), "MalformedXML", ""},
		{"an empty And", doc(`<ID>r</ID><Filter><And></And></Filter>` + on + expire1), "MalformedXML", ""},
		{"a Tag without Key", doc(`<ID>r</ID><Filter><Tag><Value>v</Value></Tag></Filter>` + on + expire1), "MalformedXML", ""},
		{"a size that is not a number", doc(`<ID>r</ID><Filter><ObjectSizeLessThan>big</ObjectSizeLessThan></Filter>` + on + expire1), "MalformedXML", ""},
		{"no action", doc(`<ID>r</ID>` + anyKey + on), "InvalidRequest", "At least one action needs to be specified in a rule"},
		{"an empty Expiration", doc(`<ID>r</ID>` + anyKey + on + `<Expiration></Expiration>`), "MalformedXML", ""},
		{"Days and Date", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Days>1</Days><Date>2026-12-31T00:00:00Z</Date></Expiration>`), "MalformedXML", ""},
		{"ExpiredObjectDeleteMarker with Days", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Days>1</Days><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`), "MalformedXML", ""},
		{"ExpiredObjectDeleteMarker false with Date", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Date>2026-12-31T00:00:00Z</Date><ExpiredObjectDeleteMarker>false</ExpiredObjectDeleteMarker></Expiration>`), "MalformedXML", ""},
		{"ExpiredObjectDeleteMarker not a boolean", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><ExpiredObjectDeleteMarker>yes</ExpiredObjectDeleteMarker></Expiration>`), "MalformedXML", ""},
		{"Days not a number", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Days>ten</Days></Expiration>`), "MalformedXML", ""},
		{"Days over 32 bits", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Days>2147483648</Days></Expiration>`), "MalformedXML", ""},
		{"a Date that is no date", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Date>tomorrow</Date></Expiration>`), "MalformedXML", ""},
		{"a Date without a time", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Date>2026-12-31</Date></Expiration>`), "MalformedXML", ""},
		{"NoncurrentVersionExpiration empty", doc(`<ID>r</ID>` + anyKey + on + `<NoncurrentVersionExpiration></NoncurrentVersionExpiration>`), "MalformedXML", ""},
		{"AbortIncompleteMultipartUpload empty", doc(`<ID>r</ID>` + anyKey + on + `<AbortIncompleteMultipartUpload></AbortIncompleteMultipartUpload>`), "MalformedXML", ""},
		{"two Expirations", doc(minimal + expire1), "MalformedXML", ""},
		{"Days 0", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Days>0</Days></Expiration>`), "InvalidArgument", "'Days' for Expiration action must be a positive integer"},
		{"Days -1", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Days>-1</Days></Expiration>`), "InvalidArgument", "'Days' for Expiration action must be a positive integer"},
		{"NoncurrentDays 0", doc(`<ID>r</ID>` + anyKey + on + `<NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays></NoncurrentVersionExpiration>`),
			"InvalidArgument", "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer"},
		{"NewerNoncurrentVersions 101", doc(`<ID>r</ID>` + anyKey + on + `<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>101</NewerNoncurrentVersions></NoncurrentVersionExpiration>`), "InvalidArgument", ""},
		{"DaysAfterInitiation 0", doc(`<ID>r</ID>` + anyKey + on + `<AbortIncompleteMultipartUpload><DaysAfterInitiation>0</DaysAfterInitiation></AbortIncompleteMultipartUpload>`),
			"InvalidArgument", "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer"},
		{"a Date not at midnight", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Date>2026-12-31T12:00:00Z</Date></Expiration>`), "InvalidArgument", "'Date' must be at midnight GMT"},
		{"a Date at local midnight", doc(`<ID>r</ID>` + anyKey + on + `<Expiration><Date>2026-12-31T00:00:00+01:00</Date></Expiration>`), "InvalidArgument", "'Date' must be at midnight GMT"},
		{"256 characters of ID", doc(`<ID>` + strings.Repeat("i", 256) + `</ID>` + anyKey + on + expire1), "InvalidArgument", "ID length should not exceed allowed limit of 255"},
		{"two rules with one ID", doc(minimal, minimal), "InvalidArgument", "Rule ID must be unique. Found same ID for more than one rule"},
		{"a size bound of 0", doc(`<ID>r</ID><Filter><ObjectSizeGreaterThan>0</ObjectSizeGreaterThan></Filter>` + on + expire1), "InvalidArgument", ""},
		{"bounds that select nothing", doc(`<ID>r</ID><Filter><And><ObjectSizeGreaterThan>9</ObjectSizeGreaterThan><ObjectSizeLessThan>9</ObjectSizeLessThan></And></Filter>` + on + expire1), "InvalidArgument", ""},
		{"a tag filter with AbortIncompleteMultipartUpload", doc(`<ID>r</ID><Filter>` + tagXML + `</Filter>` + on + abortXML),
			"InvalidRequest", "Tag-based filter cannot be used with AbortIncompleteMultipartUpload action"},
		{"a tag filter with ExpiredObjectDeleteMarker", doc(`<ID>r</ID><Filter><And><Prefix>a</Prefix>` + tagXML + `</And></Filter>` + on + `<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`),
			"InvalidRequest", "Tag-based filter cannot be used with ExpiredObjectDeleteMarker action"},
		{"two tags with one key", doc(`<ID>r</ID><Filter><And>` + tagXML + tagXML + `</And></Filter>` + on + expire1), "InvalidRequest", "Duplicate Tag Keys are not allowed."},
		{"a tag key of 129 characters", doc(`<ID>r</ID><Filter><Tag><Key>` + strings.Repeat("k", 129) + `</Key></Tag></Filter>` + on + expire1), "InvalidRequest", ""},
		{"a prefix of 1025 bytes", doc(`<ID>r</ID><Filter><Prefix>` + strings.Repeat("p", 1025) + `</Prefix></Filter>` + on + expire1), "InvalidRequest", ""},
		{"a control character", doc(`<ID>a&#x1;</ID>` + anyKey + on + expire1), "MalformedXML", ""},
		{"Transition", doc(minimal + `<Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition>`), "NotImplemented", ""},
		{"NoncurrentVersionTransition", doc(minimal + `<NoncurrentVersionTransition><NoncurrentDays>30</NoncurrentDays><StorageClass>GLACIER</StorageClass></NoncurrentVersionTransition>`), "NotImplemented", ""},
		{"the second rule refused", doc(minimal, `<ID>s</ID>`+anyKey+on+`<Expiration><Days>0</Days></Expiration>`), "InvalidArgument", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			var e *Error
			if !errors.As(err, &e) || e.Code != tt.code {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
			if tt.msg != "" && e.Message != tt.msg {
				t.Errorf("message %q, want %q", e.Message, tt.msg)
			}
		})
	}
}

// TestEncode pins the canonical form: S3's namespace, each rule's
// elements in one order, Filter predicates alone or in And.
func TestEncode(t *testing.T) {
	c, err := Parse([]byte(`<LifecycleConfiguration>
  <Rule>
    <Status>Enabled</Status>
    <Expiration><Date>2026-12-31T00:00:00.000Z</Date></Expiration>
    <Prefix>logs/</Prefix>
  </Rule>
  <Rule>
    <AbortIncompleteMultipartUpload><DaysAfterInitiation>3</DaysAfterInitiation></AbortIncompleteMultipartUpload>
    <NoncurrentVersionExpiration><NewerNoncurrentVersions>2</NewerNoncurrentVersions><NoncurrentDays>9</NoncurrentDays></NoncurrentVersionExpiration>
    <Status>Disabled</Status>
    <Filter><And><ObjectSizeLessThan>100</ObjectSizeLessThan><Prefix>a/</Prefix></And></Filter>
    <ID>second</ID>
  </Rule>
  <Rule>
    <ID>third</ID><Filter><Tag><Key>k</Key></Tag></Filter><Status>Enabled</Status>
    <Expiration><Days>1</Days></Expiration>
  </Rule>
</LifecycleConfiguration>`))
	if err != nil {
		t.Fatal(err)
	}
	want := `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Rule><ID>rule-1</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>` +
		`<Expiration><Date>2026-12-31T00:00:00Z</Date></Expiration></Rule>` +
		`<Rule><ID>second</ID><Filter><And><Prefix>a/</Prefix><ObjectSizeLessThan>100</ObjectSizeLessThan></And></Filter><Status>Disabled</Status>` +
		`<NoncurrentVersionExpiration><NoncurrentDays>9</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>` +
		`<AbortIncompleteMultipartUpload><DaysAfterInitiation>3</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>` +
		`<Rule><ID>third</ID><Filter><And><Tag><Key>k</Key><Value></Value></Tag></And></Filter><Status>Enabled</Status>` +
		`<Expiration><Days>1</Days></Expiration></Rule>` +
		`</LifecycleConfiguration>`
	if got := string(c.Encode()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
