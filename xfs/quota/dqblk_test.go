package quota

import (
	"errors"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

var testGeo = format.Geometry{BlockSize: 4096, Bigtime: true, UUID: [16]byte{1, 2, 3}}

func TestLocate(t *testing.T) {
	for _, c := range []struct {
		id  uint32
		fb  uint64
		off int
	}{{0, 0, 0}, {29, 0, 29 * RecordSize}, {30, 1, 0}, {70000, 2333, 10 * RecordSize}} {
		if fb, off := Locate(&testGeo, c.id); fb != c.fb || off != c.off {
			t.Errorf("Locate(%d) = %d, %d; want %d, %d", c.id, fb, off, c.fb, c.off)
		}
	}
}

// TestRecordRoundTrip: encode then decode keeps every field; bigtime
// timers round up to a multiple of 4 seconds, never ending early.
func TestRecordRoundTrip(t *testing.T) {
	r := NewRecord(&testGeo, 7)
	r.BlkHard, r.BlkSoft, r.InoHard, r.InoSoft = 256, 16, 100, 2
	r.BCount, r.ICount = 67, 5
	r.BTimer, r.ITimer = 1796410969, 1796324568
	b := make([]byte, RecordSize)
	r.Encode(b)
	got, err := VerifyRecord(&testGeo, b, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got.BTimer < r.BTimer || got.BTimer-r.BTimer >= 4 || got.BTimer%4 != 0 {
		t.Errorf("btimer %d encoded as %d", r.BTimer, got.BTimer)
	}
	got.BTimer, got.ITimer, got.CRCStored = r.BTimer, r.ITimer, 0
	if got != r {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
	}
	// Project 0 keeps its timers (the grace periods) as plain seconds.
	z := NewRecord(&testGeo, 0)
	z.BTimer = 259201
	z.Encode(b)
	if got := Decode(b); got.BTimer != 259201 || got.Bigtime {
		t.Errorf("project 0: %+v", got)
	}
}

// TestVerifyRejects: each rule of the kernel's verifier.
func TestVerifyRejects(t *testing.T) {
	good := func() Record {
		r := NewRecord(&testGeo, 3)
		r.BlkSoft, r.BCount, r.BTimer = 10, 5, 0
		return r
	}
	for name, spoil := range map[string]func(r *Record, b []byte){
		"crc":           func(r *Record, b []byte) { b[40] ^= 1 },
		"magic":         func(r *Record, b []byte) { b[0] = 0; FinishBlock(b) },
		"id":            func(r *Record, b []byte) { r.ID = 4; r.Encode(b) },
		"type":          func(r *Record, b []byte) { r.Type = TypeUser | TypeProject; r.Encode(b) },
		"uuid":          func(r *Record, b []byte) { r.UUID[0]++; r.Encode(b) },
		"soft no timer": func(r *Record, b []byte) { r.BCount = 11; r.Encode(b) },
		"bigtime id 0":  func(r *Record, b []byte) { r.ID = 0; r.Bigtime = true; r.Encode(b) },
	} {
		r := good()
		b := make([]byte, RecordSize)
		r.Encode(b)
		if _, err := VerifyRecord(&testGeo, b, r.ID); err != nil {
			t.Fatalf("%s: the good record fails: %v", name, err)
		}
		spoil(&r, b)
		want := uint32(3)
		if name == "bigtime id 0" {
			want = 0
		}
		if _, err := VerifyRecord(&testGeo, b, want); !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("%s: %v, want a corruption", name, err)
		}
	}
}

// TestInitBlock: a fresh block verifies, with consecutive ids.
func TestInitBlock(t *testing.T) {
	b := make([]byte, testGeo.BlockSize)
	InitBlock(&testGeo, b, 2)
	if err := VerifyBlock(&testGeo, b); err != nil {
		t.Fatal(err)
	}
	if r := Decode(b[5*RecordSize:]); r.ID != 65 || !r.Bigtime || r.Type != TypeProject {
		t.Fatalf("slot 5: %+v", r)
	}
	binaryID := b[4:8]
	binaryID[3]++ // first id 61: not a block start
	FinishBlock(b)
	if err := VerifyBlock(&testGeo, b); err == nil {
		t.Fatal("a block starting at id 61 verified")
	}
}

// FuzzVerifyBlock: any bytes give a verdict, never a panic, and a block
// that verifies re-encodes to the same bytes.
func FuzzVerifyBlock(f *testing.F) {
	b := make([]byte, testGeo.BlockSize)
	InitBlock(&testGeo, b, 1)
	f.Add(b)
	f.Add(b[:100])
	f.Fuzz(func(t *testing.T, data []byte) {
		if VerifyBlock(&testGeo, data) != nil {
			return
		}
		for off := 0; off+RecordSize <= len(data); off += RecordSize {
			r := Decode(data[off:])
			again := make([]byte, RecordSize)
			r.Encode(again)
			if r2 := Decode(again); r2.ID != r.ID || r2.BCount != r.BCount || r2.BlkHard != r.BlkHard {
				t.Fatalf("record at %d does not survive a round trip", off)
			}
		}
	})
}
