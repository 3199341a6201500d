package format

import (
	"reflect"
	"testing"
)

// TestEFIRoundTrip: both extent layouts decode to the same intent, and a
// region of any other length is refused.
func TestEFIRoundTrip(t *testing.T) {
	f := &EFILogFormat{Size: 1, ID: 0xfeed, Extents: []EFIExtent{{Start: 1<<20 | 77, Len: 5}, {Start: 300, Len: 1}}}
	for _, padded := range []bool{false, true} {
		b := f.Encode(padded)
		if want := EFIHeadSize + 2*map[bool]int{false: EFIExtentSize32, true: EFIExtentSize64}[padded]; len(b) != want {
			t.Fatalf("padded %v: %d bytes, want %d", padded, len(b), want)
		}
		g, err := DecodeEFI(b)
		if err != nil || !reflect.DeepEqual(g, f) {
			t.Fatalf("padded %v: %+v, %v", padded, g, err)
		}
		if id, err := DecodeIntentID(b); err != nil || id != f.ID {
			t.Fatalf("padded %v: intent id %#x, %v", padded, id, err)
		}
		if _, err := DecodeEFI(b[:len(b)-1]); err == nil {
			t.Fatalf("padded %v: short region accepted", padded)
		}
		if _, err := DecodeEFI(append(b, 0)); err == nil {
			t.Fatalf("padded %v: long region accepted", padded)
		}
	}
	b := f.Encode(true)
	b[0] = 0x37 // EFD
	if _, err := DecodeEFI(b); err == nil {
		t.Fatal("EFD decoded as an EFI")
	}
}

// FuzzEFI: whatever decodes has exactly the extents its length holds, and
// encodes back to the same bytes (padding aside).
func FuzzEFI(f *testing.F) {
	e := &EFILogFormat{Size: 1, ID: 3, Extents: []EFIExtent{{Start: 9, Len: 2}}}
	f.Add(e.Encode(false))
	f.Add(e.Encode(true))
	f.Add((&EFILogFormat{Size: 1, ID: 4}).Encode(true))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := DecodeEFI(b)
		if err != nil {
			return
		}
		n := len(g.Extents)
		padded := len(b) == EFIHeadSize+EFIExtentSize64*n
		if !padded && len(b) != EFIHeadSize+EFIExtentSize32*n {
			t.Fatalf("%d extents from %d bytes", n, len(b))
		}
		again, err := DecodeEFI(g.Encode(padded))
		if err != nil || !reflect.DeepEqual(again, g) {
			t.Fatalf("re-decoded %+v, %v; want %+v", again, err, g)
		}
	})
}
