package lifecycle

import (
	"encoding/xml"
	"strconv"
	"time"
)

// Encode is the canonical XML (LifecycleConfiguration with xmlns) GET
// ?lifecycle returns; Parse(Encode(c)) == c for every c Parse returned.
// Each rule is written ID, Filter, Status, then its actions; a Filter
// holds a Prefix or a size bound alone, tags or several predicates in
// And, none as <Filter></Filter>; the legacy rule-level Prefix comes back
// as a Filter.
func (c Config) Encode() []byte {
	doc := xmlConfig{Xmlns: xmlns, Rules: make([]xmlRule, len(c.Rules))}
	for i, r := range c.Rules {
		doc.Rules[i] = r.xml()
	}
	out, err := xml.Marshal(doc)
	if err != nil {
		panic("lifecycle: encode: " + err.Error()) // these types always marshal
	}
	return out
}

func (r *Rule) xml() xmlRule {
	status := "Disabled"
	if r.Enabled {
		status = "Enabled"
	}
	x := xmlRule{ID: []string{r.ID}, Filter: []xmlFilter{r.Filter.xml()}, Status: []string{status}}
	if e := r.Expiration; e != nil {
		var xe xmlExpiration
		switch {
		case e.Days > 0:
			xe.Days = []string{strconv.Itoa(e.Days)}
		case !e.Date.IsZero():
			xe.Date = []string{e.Date.UTC().Format(time.RFC3339)}
		case e.ExpiredObjectDeleteMarker:
			xe.ExpiredObjectDeleteMarker = []string{"true"}
		}
		x.Expiration = []xmlExpiration{xe}
	}
	if ne := r.NoncurrentExpiration; ne != nil {
		var xn xmlNoncurrent
		if ne.NoncurrentDays > 0 {
			xn.NoncurrentDays = []string{strconv.Itoa(ne.NoncurrentDays)}
		}
		if ne.NewerNoncurrentVersions > 0 {
			xn.NewerNoncurrentVersions = []string{strconv.Itoa(ne.NewerNoncurrentVersions)}
		}
		x.NoncurrentVersionExpiration = []xmlNoncurrent{xn}
	}
	if r.AbortIncompleteUpload > 0 {
		x.AbortIncompleteMultipartUpload = []xmlAbort{{DaysAfterInitiation: []string{strconv.Itoa(r.AbortIncompleteUpload)}}}
	}
	return x
}

func (f *Filter) xml() xmlFilter {
	var p xmlPredicates
	if f.Prefix != "" {
		p.Prefix = []string{f.Prefix}
	}
	for _, t := range f.Tags {
		p.Tag = append(p.Tag, xmlTag{Key: []string{t.Key}, Value: []string{t.Value}})
	}
	if f.SizeGreaterThan > 0 {
		p.ObjectSizeGreaterThan = []string{strconv.FormatInt(f.SizeGreaterThan, 10)}
	}
	if f.SizeLessThan > 0 {
		p.ObjectSizeLessThan = []string{strconv.FormatInt(f.SizeLessThan, 10)}
	}
	// Tags go in And even alone: mc reads a rule's tags only there.
	if p.count() > 1 || len(p.Tag) > 0 {
		return xmlFilter{And: []xmlAnd{{xmlPredicates: p}}}
	}
	return xmlFilter{xmlPredicates: p}
}
