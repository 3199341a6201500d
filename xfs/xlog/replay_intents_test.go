package xlog

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestReplayIntentsInLogOrder: unfinished EFIs, CUIs and BUIs come back in
// one list in log order, whatever their types, each done item finishing
// the oldest pending intent of its own type and ID only; an unfinished
// intent the kernel would refuse fails the replay before any block is
// written, a finished one is not looked at.
func TestReplayIntentsInLogOrder(t *testing.T) {
	g := format.Geometry{InodeSize: 512, BlockSize: 4096, BlockLog: 12, SectSize: 512, InoPBlock: 8, InoPBLog: 3,
		AgBlocks: 16, AgBlkLog: 4, AgCount: 8, DBlocks: 128, Reflink: true}
	item := func(b []byte) Item { return Item{Regions: [][]byte{b}} }
	efi := func(id uint64) *format.EFILogFormat {
		return &format.EFILogFormat{Size: 1, ID: id, Extents: []format.EFIExtent{{Start: 1<<4 | 9, Len: 2}}}
	}
	cui := func(id uint64, typ uint32) *format.CUILogFormat {
		return &format.CUILogFormat{Size: 1, ID: id, Extents: []format.PhysExtent{{Start: 2<<4 | 3, Len: 4, Flags: typ}}}
	}
	bui := func(id uint64, typ uint32) *format.BUILogFormat {
		return &format.BUILogFormat{Size: 1, ID: id, Extents: []format.MapExtent{{Owner: 3<<7 | 9, Start: 3<<4 | 5, StartOff: 7, Len: 2, Flags: typ}}}
	}
	cud := func(id uint64) Item { return item(format.EncodeIntentDone(format.LogItemCUD, id)) }
	bud := func(id uint64) Item { return item(format.EncodeIntentDone(format.LogItemBUD, id)) }
	efd := func(id uint64) Item { return item(format.EncodeIntentDone(format.LogItemEFD, id)) }
	data := bytes.Repeat([]byte{9}, 512)
	buf, _ := BufItem(16, data, nil)

	badCUI := cui(9, format.RefcountIncrease)
	badCUI.Extents[0].Flags = 7
	badBUI := bui(9, format.BmapMap)
	badBUI.Extents[0].Owner = 1 << 40
	for i, tc := range []struct {
		trans [][]Item
		want  []Intent
		ok    bool
	}{
		// EFI, CUI, BUI interleaved: the EFI is not moved ahead.
		{[][]Item{
			{buf, item(cui(1, format.RefcountIncrease).Encode()), item(bui(2, format.BmapMap).Encode())},
			{item(efi(3).Encode(true)), cud(1)},
			{item(bui(4, format.BmapUnmap).Encode()), item(cui(5, format.RefcountDecrease).Encode())},
		}, []Intent{{BUI: bui(2, format.BmapMap)}, {EFI: efi(3)}, {BUI: bui(4, format.BmapUnmap)}, {CUI: cui(5, format.RefcountDecrease)}}, true},
		// A done item finishes only its own type: a CUD naming a BUI's
		// ID leaves the BUI, an EFD a CUI's.
		{[][]Item{
			{buf, item(bui(7, format.BmapMap).Encode()), item(cui(8, format.RefcountAllocCoW).Encode())},
			{cud(7), efd(8), bud(7)},
		}, []Intent{{CUI: cui(8, format.RefcountAllocCoW)}}, true},
		// The oldest of two pending intents of one ID is the one done.
		{[][]Item{
			{buf, item(cui(1, format.RefcountIncrease).Encode())},
			{item(cui(1, format.RefcountFreeCoW).Encode())},
			{cud(1)},
		}, []Intent{{CUI: cui(1, format.RefcountFreeCoW)}}, true},
		// Finished bad intents are not checked; unfinished ones are.
		{[][]Item{{buf, item(badCUI.Encode()), item(badBUI.Encode())}, {cud(9), bud(9)}}, nil, true},
		{[][]Item{{buf, item(badCUI.Encode())}}, nil, false},
		{[][]Item{{buf, item(badBUI.Encode())}}, nil, false},
		// A torn done item is corruption.
		{[][]Item{{buf, item(cui(1, 1).Encode())}, {item(format.EncodeIntentDone(format.LogItemCUD, 1)[:12])}}, nil, false},
	} {
		var trans []*Trans
		for j, items := range tc.trans {
			trans = append(trans, &Trans{Tid: uint32(j + 1), LSN: format.MakeLSN(1, uint32(2+j)), Items: items})
		}
		d := &memDev{b: make([]byte, 64<<10)}
		st, err := Replay(d, &g, trans)
		written := d.b[16*format.BBSize] == 9
		if tc.ok != (err == nil) || written != tc.ok || (!tc.ok && !errors.Is(err, format.ErrCorrupt)) {
			t.Errorf("case %d: err %v, block written %v", i, err, written)
			continue
		}
		if tc.ok && !reflect.DeepEqual(st.Intents, tc.want) {
			t.Errorf("case %d: intents %+v, want %+v", i, st.Intents, tc.want)
		}
	}
}
