package dir

import "github.com/xfs3/xfs3/xfs/fork"

// ToBlock converts a short-form directory to block form, as the kernel
// does when an attribute fork takes room the entries need
// (xfs_bmap_add_attrfork_local → xfs_dir2_sf_to_block). A directory not in
// short form is left alone.
func ToBlock(w fork.Writer) error {
	o, err := newOp(w)
	if err != nil {
		return err
	}
	defer o.done()
	f, err := o.form()
	if err != nil || f != ShortForm {
		return err
	}
	s, err := decodeSF(w.Inline(), o.d)
	if err != nil {
		return err
	}
	if err := o.sfToBlock(s); err != nil {
		return err
	}
	o.c.Flush()
	return nil
}
