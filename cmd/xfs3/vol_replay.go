package main

import "fmt"

const replayUsage = `Usage: xfs3 vol replay VOLUME

Replay the metadata log of VOLUME if it is dirty (the process that had it
open for writing died, or the machine lost power), then mark the log clean.
The read-only commands (ls, get, stat, getfattr, df) refuse a volume whose
log needs replaying; the commands that change a volume replay it first on
their own. Replaying writes every complete transaction of the log in place,
finishes the intents a kernel that crashed left unfinished (extent frees,
refcount and bmap updates of shared extents), frees its copy-on-write
staging extents and the inodes whose last link was gone (left on the AGI
unlinked lists), and writes an unmount record, as a kernel mount would.

Prints what it did, or that the log was already clean.

Flags:
  -h, --help  show this help
`

func volReplay(args []string, e *env) error {
	fs := newFlags("vol replay")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want VOLUME, got %s", nargs(len(pos)))
	}
	v, err := openVolumeRW(pos[0])
	if err != nil {
		return err
	}
	st, replayed := v.Recovery()
	if err := v.Close(); err != nil {
		return fmt.Errorf("%s: close: %w", pos[0], err)
	}
	if !replayed {
		fmt.Fprintf(e.stdout, "%s: log is clean, nothing to replay\n", pos[0])
		return nil
	}
	fmt.Fprintf(e.stdout, "%s: replayed %d transactions from %d log records: %d blocks written, %d already newer, %d freed later; %d unlinked inodes freed; %d extents of unfinished free intents freed (%d already free)",
		pos[0], st.Transactions, st.Records, st.Replayed, st.Skipped, st.Cancelled, st.Unlinked, st.IntentsFinished, st.IntentsSkipped)
	if st.RefcountFinished+st.BmapFinished+st.CoWStagingFreed > 0 {
		fmt.Fprintf(e.stdout, "; %d refcount and %d bmap intent items finished, %d copy-on-write staging extents freed",
			st.RefcountFinished, st.BmapFinished, st.CoWStagingFreed)
	}
	fmt.Fprintln(e.stdout)
	return nil
}
