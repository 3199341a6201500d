package format

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// intentGeometry: 4 AGs of 1024 4 KiB blocks, 512-byte sectors and inodes.
var intentGeometry = Geometry{BlockSize: 4096, BlockLog: 12, SectSize: 512, InodeSize: 512, InodeLog: 9,
	InoPBlock: 8, InoPBLog: 3, AgBlocks: 1024, AgBlkLog: 10, AgCount: 4, DBlocks: 4096, Reflink: true}

// TestIntentLayouts: the byte offsets of every field, as in struct
// xfs_cui_log_format / xfs_phys_extent, xfs_bui_log_format /
// xfs_map_extent and xfs_cud/bud_log_format (all fields naturally aligned,
// host-endian).
func TestIntentLayouts(t *testing.T) {
	le := binary.LittleEndian
	cui := (&CUILogFormat{Size: 1, ID: 0x1122334455667788, Extents: []PhysExtent{
		{Start: 0x0102030405060708, Len: 0x0a0b0c0d, Flags: RefcountDecrease}, {Start: 7, Len: 1, Flags: RefcountFreeCoW}}}).Encode()
	if len(cui) != 48 || le.Uint16(cui) != 0x1242 || le.Uint16(cui[2:]) != 1 || le.Uint32(cui[4:]) != 2 ||
		le.Uint64(cui[8:]) != 0x1122334455667788 || le.Uint64(cui[16:]) != 0x0102030405060708 ||
		le.Uint32(cui[24:]) != 0x0a0b0c0d || le.Uint32(cui[28:]) != 2 || le.Uint64(cui[32:]) != 7 || le.Uint32(cui[44:]) != 4 {
		t.Fatalf("CUI % x", cui)
	}
	bui := (&BUILogFormat{Size: 1, ID: 9, Extents: []MapExtent{{Owner: 131, Start: 0x99, StartOff: 0x77, Len: 5,
		Flags: BmapMap | BmapExtentUnwritten}}}).Encode()
	if len(bui) != 48 || le.Uint16(bui) != 0x1244 || le.Uint32(bui[4:]) != 1 || le.Uint64(bui[8:]) != 9 ||
		le.Uint64(bui[16:]) != 131 || le.Uint64(bui[24:]) != 0x99 || le.Uint64(bui[32:]) != 0x77 ||
		le.Uint32(bui[40:]) != 5 || le.Uint32(bui[44:]) != 0x40000001 {
		t.Fatalf("BUI % x", bui)
	}
	for _, typ := range []uint16{LogItemCUD, LogItemBUD} {
		d := EncodeIntentDone(typ, 0xabcdef)
		if len(d) != 16 || le.Uint16(d) != typ || le.Uint64(d[8:]) != 0xabcdef {
			t.Fatalf("done item % x", d)
		}
		if id, err := DecodeIntentDone(d, typ); err != nil || id != 0xabcdef {
			t.Fatalf("decode done: %#x, %v", id, err)
		}
		if _, err := DecodeIntentDone(append(d, 0), typ); err == nil {
			t.Fatal("17-byte done item accepted")
		}
		if _, err := DecodeIntentDone(d, typ^0x6); err == nil { // CUD as BUD and back
			t.Fatal("done item of the other type accepted")
		}
	}
}

// TestIntentDecodeAndCheck: structure errors fail the decoders, content
// errors fail Check, both as corruption.
func TestIntentDecodeAndCheck(t *testing.T) {
	g := intentGeometry
	ok := &CUILogFormat{Size: 1, ID: 1, Extents: []PhysExtent{{Start: 1024 + 10, Len: 4, Flags: RefcountIncrease}}}
	if f, err := DecodeCUI(ok.Encode()); err != nil || !reflect.DeepEqual(f, ok) || f.Check(&g) != nil {
		t.Fatalf("good CUI: %+v, %v, %v", f, err, f.Check(&g))
	}
	b := ok.Encode()
	for name, bad := range map[string][]byte{
		"short":     b[:len(b)-1],
		"long":      append(append([]byte(nil), b...), make([]byte, 16)...),
		"head only": b[:10],
		"type":      append([]byte{0x44, 0x12}, b[2:]...),
	} {
		if _, err := DecodeCUI(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("CUI %s: %v", name, err)
		}
	}
	for name, e := range map[string]PhysExtent{
		"type 0":        {Start: 1034, Len: 1, Flags: 0},
		"type 5":        {Start: 1034, Len: 1, Flags: 5},
		"flag bit":      {Start: 1034, Len: 1, Flags: 1 << 8},
		"AG header":     {Start: 1024, Len: 1, Flags: 1},
		"crosses AG":    {Start: 2040, Len: 9, Flags: 1},
		"past last AG":  {Start: 4 << 10, Len: 1, Flags: 1},
		"high bits":     {Start: 1<<42 | 1034, Len: 1, Flags: 1},
		"zero length":   {Start: 1034, Len: 0, Flags: 1},
		"wrapping":      {Start: ^FsBlock(0), Len: 2, Flags: 1},
		"last AG's end": {Start: 3*1024 + 1020, Len: 5, Flags: 1},
	} {
		f := &CUILogFormat{Size: 1, ID: 2, Extents: []PhysExtent{{Start: 1034, Len: 1, Flags: 1}, e}}
		if err := f.Check(&g); !errors.Is(err, ErrCorrupt) {
			t.Errorf("CUI %s: %v", name, err)
		}
	}
	noReflink := g
	noReflink.Reflink = false
	if err := ok.Check(&noReflink); !errors.Is(err, ErrCorrupt) {
		t.Errorf("CUI without reflink: %v", err)
	}

	good := MapExtent{Owner: 1<<13 | 200, Start: 1024 + 50, StartOff: 9, Len: 3, Flags: BmapUnmap | BmapExtentAttrFork}
	bf := &BUILogFormat{Size: 1, ID: 3, Extents: []MapExtent{good}}
	if f, err := DecodeBUI(bf.Encode()); err != nil || !reflect.DeepEqual(f, bf) || f.Check(&g) != nil {
		t.Fatalf("good BUI: %+v, %v", f, err)
	}
	two := &BUILogFormat{Size: 1, ID: 3, Extents: []MapExtent{good, good}}
	if _, err := DecodeBUI(two.Encode()); !errors.Is(err, ErrCorrupt) {
		t.Errorf("BUI of two mappings: %v", err)
	}
	if _, err := DecodeBUI((&BUILogFormat{Size: 1, ID: 3}).Encode()); !errors.Is(err, ErrCorrupt) {
		t.Errorf("BUI of no mapping: %v", err)
	}
	for name, mod := range map[string]func(*MapExtent){
		"type 0":        func(e *MapExtent) { e.Flags = BmapExtentUnwritten },
		"type 3":        func(e *MapExtent) { e.Flags = 3 },
		"flag bit":      func(e *MapExtent) { e.Flags |= 1 << 20 },
		"realtime":      func(e *MapExtent) { e.Flags |= BmapExtentRealtime },
		"inode AG":      func(e *MapExtent) { e.Owner = 4 << 13 },
		"inode header":  func(e *MapExtent) { e.Owner = 1<<13 | 3 },
		"inode high":    func(e *MapExtent) { e.Owner = 1<<40 | 200 },
		"file range":    func(e *MapExtent) { e.StartOff = MaxFileOff - 1 },
		"zero length":   func(e *MapExtent) { e.Len = 0 },
		"extent":        func(e *MapExtent) { e.Start = 4096 },
		"extent header": func(e *MapExtent) { e.Start = 1024 },
	} {
		e := good
		mod(&e)
		f := &BUILogFormat{Size: 1, ID: 4, Extents: []MapExtent{e}}
		d, err := DecodeBUI(f.Encode())
		if err != nil {
			t.Fatalf("BUI %s: decode: %v", name, err)
		}
		if err := d.Check(&g); !errors.Is(err, ErrCorrupt) {
			t.Errorf("BUI %s: %v", name, err)
		}
	}
}

// FuzzIntents: no input panics a decoder; whatever decodes encodes back to
// the same bytes, and Check never panics on it.
func FuzzIntents(f *testing.F) {
	f.Add((&CUILogFormat{Size: 1, ID: 1, Extents: []PhysExtent{{Start: 1034, Len: 2, Flags: 2}}}).Encode())
	f.Add((&CUILogFormat{Size: 1, ID: 1}).Encode())
	f.Add((&BUILogFormat{Size: 1, ID: 1, Extents: []MapExtent{{Owner: 8392, Start: 1100, StartOff: 3, Len: 1, Flags: 1}}}).Encode())
	f.Add(EncodeIntentDone(LogItemCUD, 5))
	f.Add(EncodeIntentDone(LogItemBUD, 5))
	f.Fuzz(func(t *testing.T, b []byte) {
		g := intentGeometry
		if c, err := DecodeCUI(b); err == nil {
			_ = c.Check(&g)
			if again := c.Encode(); !reflect.DeepEqual(again, b) {
				t.Fatalf("CUI re-encoded to % x, was % x", again, b)
			}
		}
		if u, err := DecodeBUI(b); err == nil {
			_ = u.Check(&g)
			if again := u.Encode(); !reflect.DeepEqual(again, b) {
				t.Fatalf("BUI re-encoded to % x, was % x", again, b)
			}
		}
		for _, typ := range []uint16{LogItemCUD, LogItemBUD} {
			if id, err := DecodeIntentDone(b, typ); err == nil && (len(b) != 16 || binary.LittleEndian.Uint64(b[8:]) != id) {
				t.Fatalf("done item %#x from % x", id, b)
			}
		}
	})
}
